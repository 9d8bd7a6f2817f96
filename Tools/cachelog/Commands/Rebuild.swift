import ArgumentParser
import CacheLog
import Foundation

struct Rebuild: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rebuild the projection and its checkpoints from the log; report what changed.",
        discussion: """
            The current cache (the projection) and its checkpoints are derived from the log, so \
            they can always be rebuilt from it. Run this when 'cachelog verify' reports a damaged \
            projection row or checkpoint: reads already answer from the log meanwhile, but \
            slower. Records that fail their checks are skipped and listed; the log itself is \
            never changed. Exits 0 when the rebuild is done, whatever it repaired.

            Examples:
              cachelog rebuild
              cachelog rebuild --format json | jq '.repairedKeys'
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "Output format.")
    var format: TextOrJSON = .text

    func run() async throws {
        try await Self.reportingFailures {
            let log = try global.openForWriting()
            Terminal.progress("rebuilding…")
            let report = try await log.rebuildProjection()
            Terminal.endProgress()
            let out = StandardOutput()
            switch format {
            case .json:
                let keys = report.repairedKeys.map(JSONText.string).joined(separator: ",")
                let corrupt = report.corruptSeqs.map(String.init).joined(separator: ",")
                out.line("{\"events\":\(report.eventsFolded),\"liveKeys\":\(report.liveKeys),\"repairedKeys\":[\(keys)],\"checkpointsRewritten\":\(report.checkpointsRewritten),\"checkpointsRemoved\":\(report.checkpointsRemoved),\"corruptSeqs\":[\(corrupt)]}")
            case .text:
                out.line("folded \(counted(report.eventsFolded, "event")) into \(counted(report.liveKeys, "live key"))")
                if report.repairedKeys.isEmpty {
                    out.line("projection: unchanged")
                } else {
                    out.line("projection: repaired \(counted(report.repairedKeys.count, "key"))")
                    for key in report.repairedKeys { out.line("  \(key)") }
                }
                out.line("checkpoints: \(report.checkpointsRewritten) rewritten, \(report.checkpointsRemoved) removed")
                if !report.corruptSeqs.isEmpty {
                    out.line("skipped \(counted(report.corruptSeqs.count, "corrupt record")): seq \(report.corruptSeqs.map(String.init).joined(separator: ", "))")
                }
            }
        }
    }
}

private func counted(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
}
