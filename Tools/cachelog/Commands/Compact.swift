import ArgumentParser
import CacheLog
import CacheLogReports
import FeedCacheLog

struct Compact: AsyncParsableCommand, DatabaseCommand, FormattedCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Drop the history before a point, keeping what the live cache uses.",
        discussion: HelpLayout.keepingIndentation("""
            Removes every event before --before, or recorded more than --keep before --now, except \
            the records live cache entries use. State as of any later point stays available; \
            earlier points are gone for good. It reports the bytes of history freed: LMDB reuses \
            their pages for later writes, but data.mdb does not shrink. To make the file smaller, stop \
            every process that uses the database and replace data.mdb with LMDB's compacting copy \
            (Documentation/Tool.md, "Reclaiming disk space"); a copy made while another process writes would lose \
            that process's later writes, so the tool does not make it for you. A database that \
            does not exist yet is nothing to compact (exit 0; nothing is created).

            Examples:
              cachelog compact --keep 30d
              cachelog compact --before 1000
              cachelog compact --before 30d
              cachelog compact --keep 30d --format json | jq .bytesFreed
              cachelog compact --before 2026-11-01T00:00:00Z
            """))

    @ParentCommand var parent: CacheLogCommand

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "A seq, a date, or a duration before --now (30d): the first event recorded at or after it.",
        discussion: "Takes \(PositionArgument.forms).", valueName: "seq|date|duration"), transform: PositionArgument.parse)
    var before: PositionArgument?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Keep this much history: drop what was recorded more than this before --now (90s, 15m, 12h, 7d, 1w).",
        valueName: "duration"), transform: MaxAgeArgument.parse)
    var keep: MaxAgeArgument?

    @Option(name: .customLong("format"), help: DocumentFormat.help)
    var formatOption: DocumentFormat?

    static let eitherBeforeOrKeep = ValidationError("give either --before <seq|date> or --keep <duration>")

    func validate() throws {
        try checkDocumentFormat()
        guard (before == nil) != (keep == nil) else { throw Self.eitherBeforeOrKeep }
    }

    func run() async throws {
        // Resolved before opening, so that a bad --now is a usage error, not a failure.
        let now = try global.clock()()
        guard let position = keep.map({ LogPosition.date(now.addingTimeInterval(-$0.value.timeInterval)) }) ?? before?.position(now: now)
        else { throw Self.eitherBeforeOrKeep }
        try await Self.reportingFailures {
            let log: EventLog
            do {
                log = try global.openForWriting()
            } catch CacheLogError.noDatabase(let path) {
                // A cron job that runs before the first load, as validate: nothing to do, and
                // nothing is created.
                let out = StandardOutput()
                try out.show(CompactSummary.nothing, as: format) {
                    if !global.quiet { out.line("nothing to compact: no database at \(path) yet") }
                }
                return
            }
            let report = try await log.compact(before: position)
            await DueRetention.apply { try await log.applyRetentionIfDue() }
            let out = StandardOutput()
            try out.show(CompactSummary(report), as: format) {
                guard report.removed > 0 || !global.quiet else { return }
                out.line("removed \(counted(report.removed, "event")) (\(report.bytesFreed) bytes); kept \(report.keptLive) earlier still in use; history now starts after seq \(report.firstAvailable)")
            }
        }
    }
}
