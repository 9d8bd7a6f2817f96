import ArgumentParser
import FeedCacheLog

struct Audit: AsyncParsableCommand, DatabaseCommand, DocumentCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Answer \"why was it stale?\": each key's cache timeline.",
        discussion: HelpLayout.keepingIndentation("""
            For each key: when every cache version was written, when it became stale under the \
            policy it was saved under (7d for a version saved before puts recorded a policy) or \
            under --max-age when given, when it was replaced, expired or deleted and why, and the \
            gaps with no cache. --max-age is at most 36500d. A stored date or max age that is not a finite number is \
            shown as nan, inf or -inf (null in JSON), and a version with such a timestamp never \
            goes stale: it never was fresh. A version cached later than it was recorded (a clock \
            ahead) is stale from when it was recorded.

            After a compaction the timeline starts with the version live where the history now \
            starts; a put kept only for the bytes a later put refers to is not a version.

            Examples:
              cachelog audit --key films
              cachelog audit --max-age 30d --format json | jq '.keys[].timeline[] | select(.kind == "stale")'
            """))

    @ParentCommand var parent: CacheLogCommand

    @Option(help: ArgumentHelp("Only this key.", valueName: "name"))
    var key: String?

    @Option(name: .customLong("max-age"), parsing: .unconditional, help: MaxAgeArgument.judgingHelp, transform: MaxAgeArgument.parse)
    var maxAge: MaxAgeArgument?

    @Option(name: .customLong("format"), help: DocumentFormat.help)
    var formatOption: DocumentFormat?

    func run() async throws {
        try await reading { log in
            let now = try global.clock()()
            let audit = try CacheAudit(log: log, maxAge: maxAge?.value).timelines(of: key, now: now)
            let out = StandardOutput()
            try out.show(AuditReport(maxAge: maxAge?.value.timeInterval, audit: audit), as: format) {
                if audit.keys.isEmpty { out.line("no events\(key.map { " for \(EventPrinter.escaped($0))" } ?? "")") }
                for (index, audited) in audit.keys.enumerated() {
                    if index > 0 { out.line() }
                    out.line(Terminal.color(EventPrinter.escaped(audited.key), "1"))
                    for entry in audited.timeline {
                        let seq = entry.seq.map { "seq \($0)" } ?? ""
                        out.line("  \(EventPrinter.pad(DateParsing.column(entry.at), 20))  \(EventPrinter.pad(entry.kind.rawValue, 8))  \(EventPrinter.pad(seq, 8))  \(entry.text)")
                    }
                }
                if !audit.corruptSeqs.isEmpty { out.line("corrupt records skipped: \(audit.corruptSeqs.map(String.init).joined(separator: ", ")) (run cachelog verify)") }
            }
        }
    }
}
