import ArgumentParser
import CacheLog
import FeedCache
import CacheLogReports
import FeedCacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Retention: AsyncParsableCommand, DatabaseCommand, FormattedCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention",
        abstract: "Show or set how much history the database keeps and how large it may grow.",
        discussion: HelpLayout.keepingIndentation("""
            The policy is recorded in the log (a retention event: replay shows when and by whom \
            it changed), and every process that writes the database, this tool or an app through \
            the library, applies it as it goes, in short slices: history older than its key's \
            window goes; then, while the database is over its size limit, the oldest history; \
            then, only while the live caches themselves are over the limit, the caches saved \
            longest ago (never the newest), each with a delete whose reason is evicted (a load, \
            audit and replay say so). A key \
            keeps the version its history starts from and its live cache. What the database needs \
            whatever is evicted (each key's history and its index entries, the checkpoints, \
            LMDB's own pages: its floor) is never paid for with live caches: when a limit is \
            below it, the pass drops what history it can, keeps the live caches and says so. A \
            database that records no policy follows the default: 30 days of history and 256MiB.

            Without options it shows the policy, the bytes the database uses against the limit \
            and what retention last did (creating nothing). With options it records a new policy \
            (what is not given stays as it was; creating the database if needed) and applies it. \
            --apply runs a pass now, to its end. What it shows as the last pass is then what this \
            run's passes did, all of them.

            Durations: \(MaxAge.forms), or forever; 0 keeps no history (only the live cache). \
            Sizes: \(RetentionPolicy.sizeForms), or none; at least 1MiB.

            Examples:
              cachelog retention
              cachelog retention --history 30d --size-limit 64MB
              cachelog retention --keep 'image:=0s' --keep-contract films=90d --by "ops team"
              cachelog retention --apply --format json | jq .lastPass
            """))

    @ParentCommand var parent: CacheLogCommand

    @Option(parsing: .unconditional, help: ArgumentHelp("How long history is kept: a duration, 0 or forever.", valueName: "duration"),
            transform: Window.parse)
    var history: Window?

    @Option(name: .customLong("size-limit"), parsing: .unconditional,
            help: ArgumentHelp("The most bytes the database may use: 64MB, 512MiB, 1GB… or none.", valueName: "size"), transform: SizeLimit.parse)
    var sizeLimit: SizeLimit?

    @Option(name: .customLong("keep"), help: ArgumentHelp(
        "A window for the keys that start with PREFIX, as PREFIX=DURATION ('image:=0s'); repeatable; none clears them. Given, these replace the recorded prefixes; the first that matches a key wins, before any contract.",
        valueName: "prefix=duration"), transform: { try Override.parse($0, contract: false) })
    var keep: [Override] = []

    @Option(name: .customLong("keep-contract"), help: ArgumentHelp(
        "A window for the keys whose live cache follows contract NAME, as NAME=DURATION (films=90d); repeatable; none clears them. Given, these replace the recorded contracts.",
        valueName: "name=duration"), transform: { try Override.parse($0, contract: true) })
    var keepContract: [Override] = []

    @Option(help: ArgumentHelp("Who sets the policy, as replay shows it. (default: cachelog retention (your user name))", valueName: "text"))
    var by: String?

    @Flag(help: "Run a pass now, to its end.")
    var apply = false

    @Option(name: .customLong("format"), help: DocumentFormat.help)
    var formatOption: DocumentFormat?

    func validate() throws {
        try checkDocumentFormat()
        if by != nil && !setsPolicy { throw ValidationError("--by names who sets a policy: give it with --history, --size-limit, --keep or --keep-contract") }
        if let by, by.allSatisfy(\.isWhitespace) { throw ValidationError("--by must name who sets the policy, not be empty") }
        if let by, by.count > Self.maximumSetter { throw ValidationError("--by takes at most \(Self.maximumSetter) characters, not \(by.count)") }
    }

    private var setsPolicy: Bool { history != nil || sizeLimit != nil || !keep.isEmpty || !keepContract.isEmpty }

    func run() async throws {
        try await Self.reportingFailures {
            let log: EventLog
            do {
                log = setsPolicy || apply ? try global.openForWriting(create: setsPolicy, retaining: false) : try global.openForReading()
            } catch CacheLogError.noDatabase(let path) {
                // Nothing recorded yet: the default applies, and showing it creates nothing.
                try show(RetentionSummary(status: nil), note: "no database at \(path) yet: the default applies")
                return
            }
            if setsPolicy {
                var policy = try log.retentionPolicy().policy
                if let history { policy.history = history.seconds }
                if let sizeLimit { policy.sizeLimit = sizeLimit.bytes }
                // --keep replaces the recorded prefixes, --keep-contract the recorded contracts;
                // prefixes are matched first.
                let recorded = policy.overrides
                let prefixes = keep.isEmpty ? recorded.filter(\.isPrefix) : keep.compactMap(\.override)
                let contracts = keepContract.isEmpty ? recorded.filter { !$0.isPrefix } : keepContract.compactMap(\.override)
                policy.overrides = prefixes + contracts
                if let problem = policy.problem { throw ValidationError(problem) }
                try await log.setRetentionPolicy(policy, by: by ?? Self.setter)
            }
            // A new policy makes a pass due; --apply runs one anyway. What they did is what the
            // summary shows as the last pass (a run may end one pass and start the next).
            let ran = apply || setsPolicy ? try await log.applyRetention() : nil
            try show(RetentionSummary(status: try log.retentionStatus(), ran: ran), note: nil)
        }
    }

    private func show(_ summary: RetentionSummary, note: String?) throws {
        let out = StandardOutput()
        try out.show(summary, as: format) {
            summary.text.forEach(out.line)
            if let note { out.line(note) }
        }
    }

    /// The longest --by the record keeps.
    static let maximumSetter = 200

    /// Who sets a policy from the tool: `cachelog retention (user)`.
    private static var setter: String {
        guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return "cachelog retention (uid \(geteuid()))" }
        return "cachelog retention (\(String(cString: name)))"
    }

    // MARK: arguments

    /// A window: a duration (0 allowed) or `forever`.
    struct Window: Sendable {
        let seconds: TimeInterval?

        static func parse(_ text: String) throws -> Window {
            if text == "forever" { return Window(seconds: nil) }
            if text.hasPrefix("-") { throw ValidationError("\(MaxAge.ParseError.negative), or forever") }
            // The help's "0 keeps no history": a zero needs no unit.
            if text == "0" { return Window(seconds: 0) }
            do {
                let duration = try MaxAge.duration(text)
                guard duration.timeInterval <= RetentionPolicy.maximumHistory else { throw MaxAge.ParseError.tooLong }
                return Window(seconds: duration.timeInterval)
            } catch let error as MaxAge.ParseError {
                throw ValidationError("\(error), or forever")
            }
        }
    }

    /// A size limit: a size, or `none`.
    struct SizeLimit: Sendable {
        let bytes: Int?

        static func parse(_ text: String) throws -> SizeLimit {
            if text == "none" { return SizeLimit(bytes: nil) }
            guard let bytes = RetentionPolicy.size(text) else { throw ValidationError("'\(text)' is not a size: write \(RetentionPolicy.sizeForms), or none") }
            guard bytes >= RetentionPolicy.minimumSizeLimit else { throw ValidationError("the size limit must be at least 1MiB") }
            return SizeLimit(bytes: bytes)
        }
    }

    /// `PREFIX=DURATION` or `NAME=DURATION`; `none` clears them.
    struct Override: Sendable {
        let override: RetentionPolicy.Override?

        static func parse(_ text: String, contract: Bool) throws -> Override {
            if text == "none" { return Override(override: nil) }
            guard let equals = text.lastIndex(of: "="), equals != text.startIndex else {
                throw ValidationError("write \(contract ? "NAME" : "PREFIX")=DURATION, e.g. \(contract ? "films=90d" : "image:=0s"), not '\(text)'")
            }
            let name = String(text[..<equals])
            guard let seconds = try Window.parse(String(text[text.index(after: equals)...])).seconds else {
                throw ValidationError("an override's window must be a duration, not forever (leave the key out of the overrides instead)")
            }
            return Override(override: .init(contract ? .contract(name) : .keyPrefix(name), history: seconds))
        }
    }
}

/// `retention --format json`, and its text.
struct RetentionSummary: Encodable {
    struct Policy: Encodable {
        /// null for ever, as `replay` prints a retention record.
        @NullWhenNil var history: Double?
        /// null for no limit.
        @NullWhenNil var sizeLimit: Int?
        var overrides: [Override]
    }

    struct Override: Encodable {
        var prefix: String?
        var contract: String?
        var history: Double
    }

    struct Recorded: Encodable, Equatable {
        var seq: UInt64
        var by: String?
    }

    struct Pass: Encodable, Equatable {
        var startedAt: Date
        var removed: Int
        var freedBytes: Int
        var evicted: Int
        var finished: Bool
        /// null unless the size limit pressed and could not be met.
        @NullWhenNil var unmetLimit: Unmet?
    }

    struct Unmet: Encodable, Equatable {
        var limit: Int
        var floorBytes: Int
        var liveBytes: Int
        var keys: Int
    }

    let policy: Policy
    /// The record that set it; null for the default.
    let recorded: Recorded?
    let bytesInUse: Int?
    let lastPass: Pass?
    private let status: RetentionStatus?

    private enum CodingKeys: String, CodingKey { case policy, recorded, bytesInUse, lastPass }

    /// `ran`: what this run's passes did, shown as the last pass.
    init(status: RetentionStatus?, ran: RetentionReport? = nil) {
        var status = status
        if let ran { status?.lastPass = ran }
        self.status = status
        let policy = status?.policy ?? .default
        self.policy = Policy(history: policy.history, sizeLimit: policy.sizeLimit, overrides: policy.overrides.map { override in
            switch override.match {
            case .keyPrefix(let prefix): Override(prefix: prefix, history: override.history)
            case .contract(let contract): Override(contract: contract, history: override.history)
            }
        })
        recorded = status?.recordedAt.map { Recorded(seq: $0, by: status?.setBy) }
        bytesInUse = status?.bytesInUse
        lastPass = status?.lastPass.map {
            Pass(startedAt: $0.startedAt, removed: $0.removed, freedBytes: $0.freedBytes, evicted: $0.evicted, finished: $0.finished,
                 unmetLimit: $0.unmetLimit.map { Unmet(limit: $0.limit, floorBytes: $0.floorBytes, liveBytes: $0.liveBytes, keys: $0.keys) })
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(policy, forKey: .policy)
        try container.encode(NullWhenNil(wrappedValue: recorded), forKey: .recorded)
        try container.encode(NullWhenNil(wrappedValue: bytesInUse), forKey: .bytesInUse)
        try container.encode(NullWhenNil(wrappedValue: lastPass), forKey: .lastPass)
    }

    var text: [String] {
        let policy = status?.policy ?? .default
        var lines = ["retention   " + RetentionText.summary(policy) + (status?.recordedAt.map { seq in
            " (set at seq \(seq)\(status?.setBy.map { " by \(EventPrinter.escaped($0))" } ?? ""))"
        } ?? " (the default: no policy is recorded)")]
        if let used = status?.bytesInUse {
            let limit = policy.sizeLimit.map { " of \(RetentionPolicy.sizeText($0)) (\(Int((Double(used) / Double($0) * 100).rounded()))%)" } ?? ""
            lines.append("in use      \(used) bytes\(limit)")
        }
        if let pass = status?.lastPass {
            let state = pass.finished ? "" : ", still under way"
            lines.append("last pass   \(DateParsing.string(pass.startedAt)): removed \(counted(pass.removed, "record")) (\(pass.freedBytes) bytes), evicted \(counted(pass.evicted, "cache"))\(state)")
            if let unmet = pass.unmetLimit { lines.append("limit unmet \(RetentionText.unmet(unmet))") }
        }
        return lines
    }
}

private extension RetentionPolicy.Override {
    var isPrefix: Bool {
        if case .keyPrefix = match { true } else { false }
    }
}
