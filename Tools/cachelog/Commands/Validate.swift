import ArgumentParser
import CacheLog
import FeedCache
import FeedCacheLog
import Foundation
import Logging

struct Validate: AsyncParsableCommand, DatabaseCommand, DocumentCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Run the validate-cache use case over one key or every key (a cron job).",
        discussion: HelpLayout.keepingIndentation("""
            Each key is judged by the policy its cache was saved under (the max age and contract \
            that load recorded; 7d and no contract for caches saved before puts recorded a policy), \
            or by --max-age for every key when it is given. A cache that old or older is expired \
            (an expire event removes it); a cache that cannot be read back, or whose payload no \
            longer decodes under its contract, is deleted with reason retrieval-error; a fresh \
            cache is left alone.

            --now judges ages at another moment, and the expires it writes are real: they are \
            recorded at that moment, and since recorded time never goes backward in the log, a \
            future --now also stamps every later event with it. To ask "what would expire on \
            Friday?" without writing anything, add --dry-run.

            --quiet prints only what was expired or deleted, and problems. A database that does \
            not exist yet is nothing to validate (exit 0; nothing is created); --key with a key \
            the log never held is an error (exit 1). JSON outcomes carry key, outcome, detail, \
            and the judged cache's timestamp, age and maxAge (seconds) and seq (null without one).

            A key that cannot be validated (its write fails) is reported and the others go on; \
            the exit code is then 1.

            Examples:
              cachelog validate
              cachelog validate --key films --max-age 1d
              cachelog --now 2026-12-09T10:00:00Z validate --dry-run
              cachelog --now 2026-12-09T10:00:00Z validate --format json | jq '.[] | select(.outcome == "expired")'
            """))

    @ParentCommand var parent: CacheLogCommand

    @Option(help: ArgumentHelp("Only this key.", valueName: "name"))
    var key: String?

    @Option(name: .customLong("max-age"), parsing: .unconditional, help: ArgumentHelp("One max age for every key: 90s, 15m, 12h, 7d or 1w (units s m h d w); at most 36500d. (default: each key's recorded policy)", valueName: "duration"), transform: MaxAgeArgument.parse)
    var maxAge: MaxAgeArgument?

    @Flag(name: .customLong("dry-run"), help: "Print what would be expired or deleted; write nothing.")
    var dryRun = false

    @Option(name: .customLong("format"), help: DocumentFormat.help)
    var formatOption: DocumentFormat?

    func run() async throws {
        try await Self.reportingFailures {
            // A dry run only reads: it works on a database this user may not write.
            let log: EventLog
            do {
                log = try dryRun ? global.openForReading() : global.openForWriting()
            } catch CacheLogError.noDatabase(let path) {
                // A cron job that runs before the first load: nothing is wrong, and nothing is created.
                let out = StandardOutput()
                try out.show([ValidationOutcome](), as: format) {
                    if !global.quiet { out.line("nothing to validate: no database at \(path) yet") }
                }
                out.flush()
                return
            }
            let clock = try global.clock()
            if let key, try log.events(EventQuery(key: key, limit: 1)).isEmpty {
                throw CLIFailure("no key '\(key)' in the log; 'cachelog state' lists the live keys")
            }
            let keys = try key.map { [$0] } ?? log.state().entries.map(\.key)
            var outcomes: [ValidationOutcome] = []
            for key in keys {
                do {
                    outcomes.append(try await validate(key, in: log, clock: clock))
                } catch {
                    outcomes.append(ValidationOutcome(key: key, outcome: .failed, detail: "\(error)"))
                }
            }
            let out = StandardOutput()
            // A dry run says so in each JSON object.
            if dryRun { for index in outcomes.indices { outcomes[index].dryRun = true } }
            try out.show(outcomes, as: format) {
                if outcomes.isEmpty && !global.quiet { out.line("no live cache entries") }
                for outcome in outcomes where outcome.isNews || !global.quiet {
                    let verb = dryRun ? [.expired: "would expire", .deleted: "would delete"][outcome.outcome] ?? outcome.outcome.rawValue : outcome.outcome.rawValue
                    out.line("\(EventPrinter.escaped(outcome.key)): \(verb) (\(outcome.detail))")
                }
            }
            out.flush()
            if outcomes.contains(where: { $0.outcome == .failed }) { throw ExitCode(Exit.failure) }
        }
    }

    /// Whether the put that held `entry` reads back whole: asked only after validation deleted
    /// the cache, to say why (the put stays in the log). A cache that read back was deleted
    /// because its payload does not decode under its contract.
    private static func readsBack(_ entry: LogState.Entry?, key: String, in log: EventLog) -> Bool {
        guard let entry,
              case .event(let put)? = try? log.events(EventQuery(from: .seq(entry.seq), to: .seq(entry.seq), includePayload: true)).first
        else { return false }
        return put.kind == .put && put.key.utf8.elementsEqual(key.utf8) && put.payload != nil
    }

    private func validate(_ key: String, in log: EventLog, clock: @escaping @Sendable () -> Date) async throws -> ValidationOutcome {
        let before = try log.entry(key)
        let recorded = before.map(RecordedPolicy.init(of:))
        // What the use case will judge by, for the report: the use case reads the policy itself.
        let policy = maxAge?.value ?? recorded?.maxAge ?? RecordedPolicy.unrecorded.maxAge
        let contract = recorded?.contract.flatMap { $0.isBuiltIn ? Contract(rawValue: $0.name) : nil }
        let store = RecordingFeedStore(CacheLogFeedStore(log: log, key: key), dryRun: dryRun)
        try await ValidationJob(
            store: store, clock: clock, policy: CachePolicy(maxAge: maxAge?.value ?? RecordedPolicy.unrecorded.maxAge),
            judging: maxAge == nil ? .recorded : .loaders, logger: global.logger()
        ).run(contract)
        // The facts, as fields for JSON.
        func facts(_ outcome: ValidationOutcome) -> ValidationOutcome {
            var outcome = outcome
            guard let before else { return outcome }
            outcome.timestamp = before.timestamp
            outcome.age = clock().timeIntervalSince(before.timestamp)
            outcome.maxAge = policy.timeInterval
            outcome.seq = before.seq
            return outcome
        }
        let age = before.map {
            "cached \(DateParsing.string($0.timestamp)), \(DurationText.string(clock().timeIntervalSince($0.timestamp))) old, max age \(policy)"
        }
        // Where the write landed; a dry run wrote nothing.
        func written(_ verb: String) throws -> String {
            guard !dryRun else { return "nothing written" }
            let last = try log.events(EventQuery(key: key, reverse: true, limit: 1)).first
            return "\(verb) at seq \(last?.seq ?? 0)"
        }
        switch await store.writes.last {
        case .delete?:
            let why = Self.readsBack(before, key: key, in: log) ? "not a valid \(contract?.rawValue ?? "") payload" : "unreadable"
            return facts(ValidationOutcome(key: key, outcome: .deleted, detail: "\(why); \(try written("deleted"))"))
        case .expire?:
            return facts(ValidationOutcome(key: key, outcome: .expired, detail: "\(age ?? "no cache"); \(try written("expired"))"))
        default:
            guard let age else { return ValidationOutcome(key: key, outcome: .empty, detail: "no cache") }
            return facts(ValidationOutcome(key: key, outcome: .fresh, detail: age))
        }
    }
}
