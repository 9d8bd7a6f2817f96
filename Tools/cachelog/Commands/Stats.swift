import ArgumentParser
import CacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct Stats: AsyncParsableCommand, DatabaseCommand, DocumentCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Count events by type and key; show sizes and compression.",
        discussion: HelpLayout.keepingIndentation("""
            Examples:
              cachelog stats
              cachelog stats --format json | jq .compressionRatio
            """))

    @ParentCommand var parent: CacheLogCommand

    @Option(name: .customLong("format"), help: DocumentFormat.help)
    var formatOption: DocumentFormat?

    func run() async throws {
        try await reading { log in
            let stats = try log.stats()
            let retention = try log.retentionStatus()
            let out = StandardOutput()
            try out.show(StatsReport(stats, retention: retention), as: format) {
                let policies = stats.events.retention > 0 ? ", retention \(stats.events.retention)" : ""
                out.line("events      \(stats.events.total) (put \(stats.events.put), delete \(stats.events.delete), expire \(stats.events.expire)\(policies))")
                out.line("seqs        \(stats.firstSeq.map(String.init) ?? "-") … \(stats.lastSeq)")
                out.line("recorded    \(stats.firstRecordedAt.map(DateParsing.string) ?? "-") … \(stats.lastRecordedAt.map(DateParsing.string) ?? "-")")
                out.line("live keys   \(stats.liveKeys)")
                // "Stored" is one thing everywhere, as replay says it: a whole record's bytes.
                out.line("payloads    \(stats.payloadBytes) bytes, compressed to \(stats.storedPayloadBytes) (\(stats.compressionRatio.map { DecimalText.string($0, places: 2) + "x" } ?? "-"))")
                out.line("stored      \(stats.storedBytes) bytes in records (headers, keys, compressed payloads, checksums)")
                out.line("map         \(stats.mapUsed) of \(stats.mapSize) bytes used")
                // What the retention policy bounds, and what it did last (cachelog retention).
                RetentionSummary(status: retention).text.forEach(out.line)
                if stats.corruptRecords > 0 { out.line("corrupt     \(stats.corruptRecords) records (run cachelog verify)") }
                if !stats.byKey.isEmpty {
                    out.line()
                    let keys = stats.sortedKeys.map { String(decoding: $0, as: UTF8.self) }
                    let keyWidth = EventPrinter.keyColumnWidth(keys)
                    out.line(Terminal.color(EventPrinter.pad("KEY", keyWidth) + "     PUT  DELETE  EXPIRE", "1"))
                    for (key, name) in zip(stats.sortedKeys, keys) {
                        let c = stats.byKey[key] ?? .init()
                        out.line("\(EventPrinter.keyCell(name, keyWidth))  \(EventPrinter.pad(String(c.put), 6, right: true))  \(EventPrinter.pad(String(c.delete), 6, right: true))  \(EventPrinter.pad(String(c.expire), 6, right: true))")
                    }
                }
            }
        }
    }
}
