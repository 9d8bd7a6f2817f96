import ArgumentParser
import CacheLog
import Foundation

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
            goes stale: it never was fresh.

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
            // Keyed by the key's bytes, as the log keys it: Swift's String equality would merge
            // keys that differ only in Unicode normalization (NFC and NFD "café").
            var byKey: [[UInt8]: [RecordedEvent]] = [:]
            var corrupt: [UInt64] = []
            try log.forEachEvent(EventQuery(key: key)) { item in
                switch item {
                case .event(let event): byKey[Array(event.key.utf8), default: []].append(event)
                case .corrupt(let seq, _): corrupt.append(seq)
                }
                return true
            }
            let timeline = AuditTimeline(maxAge: maxAge?.value)
            let keys = byKey.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { key in
                AuditReport.Key(key: String(decoding: key, as: UTF8.self), timeline: timeline.build(byKey[key] ?? [], now: now))
            }
            let out = StandardOutput()
            try out.show(AuditReport(maxAge: maxAge?.value.timeInterval, corruptSeqs: corrupt, keys: keys), as: format) {
                if keys.isEmpty { out.line("no events\(key.map { " for \($0)" } ?? "")") }
                for (index, audited) in keys.enumerated() {
                    if index > 0 { out.line() }
                    out.line(Terminal.color(audited.key, "1"))
                    for entry in audited.timeline {
                        let seq = entry.seq.map { "seq \($0)" } ?? ""
                        out.line("  \(EventPrinter.pad(DateParsing.column(entry.at), 20))  \(EventPrinter.pad(entry.kind.rawValue, 8))  \(EventPrinter.pad(seq, 8))  \(entry.text)")
                    }
                }
                if !corrupt.isEmpty { out.line("corrupt records skipped: \(corrupt.map(String.init).joined(separator: ", ")) (run cachelog verify)") }
            }
        }
    }
}
