import ArgumentParser
import CacheLog
import CacheLogReports
import FeedCacheLog

struct Rebuild: AsyncParsableCommand, DatabaseCommand, DocumentCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract: "Rebuild the state, its checkpoints and the key index from the log; report what changed.",
        discussion: HelpLayout.keepingIndentation("""
            The current cache (the state: the projection of the log), its checkpoints, the key \
            index and the log's counters are derived from the log, so they can be rebuilt from it. Run this when 'cachelog verify' \
            says rebuild repairs what it found. Meanwhile, reads answer from the log when a \
            state row cannot be decoded (slower); a row that decodes but is wrong is only \
            found by verify. Records that fail their checks are skipped and listed; the log \
            itself is never changed. After a compaction, the checkpoint at the compaction base \
            stands for history that is gone: if it is damaged, nothing can rebuild it, and this \
            says so (exit 1). Exits 0 when the rebuild is done, whatever it repaired.

            Examples:
              cachelog rebuild
              cachelog rebuild --format json | jq '.repairedKeys'
            """))

    @ParentCommand var parent: CacheLogCommand

    @Option(name: .customLong("format"), help: DocumentFormat.help)
    var formatOption: DocumentFormat?

    func run() async throws {
        try await writing { log in
            let report = try await Terminal.showingProgress("rebuilding…") { try await log.rebuildState() }
            let out = StandardOutput()
            try out.show(RebuildSummary(report), as: format) {
                out.line("folded \(counted(report.eventsFolded, "event")) into \(counted(report.liveKeys, "live key"))")
                if report.repairedKeys.isEmpty {
                    out.line("state: unchanged")
                } else {
                    out.line("state: repaired \(counted(report.repairedKeys.count, "key"))")
                    for key in report.repairedKeys { out.line("  \(key)") }
                }
                out.line("checkpoints: \(report.checkpointsRewritten) rewritten, \(report.checkpointsRemoved) removed")
                if report.keyIndexEntriesRepaired > 0 {
                    out.line("key index: repaired \(counted(report.keyIndexEntriesRepaired, "entry", plural: "entries"))")
                }
                if report.refsEntriesRepaired > 0 {
                    out.line("refs table: repaired \(counted(report.refsEntriesRepaired, "entry", plural: "entries"))")
                }
                if !report.restoredCounters.isEmpty {
                    out.line("counters: restored \(report.restoredCounters.joined(separator: ", ")) from the log")
                }
                if !report.corruptSeqs.isEmpty {
                    out.line("skipped \(counted(report.corruptSeqs.count, "corrupt record")): seq \(report.corruptSeqs.map(String.init).joined(separator: ", "))")
                }
            }
        }
    }
}
