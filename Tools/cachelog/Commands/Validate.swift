import ArgumentParser
import CacheLogKit

struct Validate: AsyncParsableCommand, DatabaseCommand, DocumentCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Run the validate-cache use case over one key or every key (a cron job).",
        discussion: HelpLayout.keepingIndentation("""
            Each key is judged by the policy its cache was saved under (the max age and contract \
            that load recorded; 7d and no contract for caches saved before puts recorded a policy), \
            or by --max-age for every key when it is given. A cache that old or older is expired \
            (an expire event removes it); a cache that cannot be read back, or whose payload no \
            longer decodes under a contract of the tool's own (one that load recorded; an app's \
            contract of the same name is judged by age alone), is deleted with reason \
            retrieval-error; a fresh cache is left alone. An age counts from the cache's timestamp, \
            or from when its save was recorded if that is earlier; a cache stamped later than --now \
            (saved by a clock that was ahead) is not fresh, and is expired.

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
            let client = try global.client(readOnly: dryRun)
            guard let log = try client.existingLog() else {
                // A cron job that runs before the first load: nothing is wrong, and nothing is created.
                let out = StandardOutput()
                try out.show([ValidationOutcome](), as: format) {
                    if !global.quiet { out.line("nothing to validate: no database at \(global.databasePath()) yet") }
                }
                out.flush()
                return
            }
            if let key, try log.events(EventQuery(key: key, limit: 1)).isEmpty {
                throw CLIFailure("no key '\(key)' in the log; 'cachelog state' lists the live keys")
            }
            let outcomes = try await client.validate(key: key, maxAge: maxAge?.value, dryRun: dryRun)
            let out = StandardOutput()
            try out.show(outcomes, as: format) {
                if outcomes.isEmpty && !global.quiet { out.line("no live cache entries") }
                for outcome in outcomes where outcome.isNews || !global.quiet {
                    let verb = dryRun ? [.expired: "would expire", .deleted: "would delete"][outcome.outcome] ?? outcome.outcome.rawValue : outcome.outcome.rawValue
                    out.line("\(EventPrinter.escaped(outcome.key)): \(verb) (\(outcome.detail))")
                }
            }
            out.flush()
            if !dryRun { await DueRetention.apply { try await client.applyRetentionIfDue() } }
            if outcomes.contains(where: { $0.outcome == .failed }) { throw ExitCode(Exit.failure) }
        }
    }
}
