import ArgumentParser
import CacheLog
import Foundation

struct Compact: AsyncParsableCommand, DatabaseCommand {
    static let configuration = CommandConfiguration(
        abstract: "Drop the history before a point, keeping what the live cache uses.",
        discussion: """
            Removes every event before --before except the puts that hold live cache entries. \
            State as of any later point stays available; earlier points are gone for good.

            Examples:
              cachelog compact --before 1000
              cachelog compact --before 2026-11-01T00:00:00Z
            """)

    @ParentCommand var parent: CacheLogCommand

    @Option(help: ArgumentHelp("A seq, or a date (the first event recorded at or after it).", valueName: "seq|date"))
    var before: PositionArgument

    func run() async throws {
        try await writing { log in
            let report = try await log.compact(before: before.position)
            let out = StandardOutput()
            out.line("removed \(report.removed) event\(report.removed == 1 ? "" : "s"); kept \(report.keptLive) earlier still in use; history now starts after seq \(report.firstAvailable)")
        }
    }
}
