import ArgumentParser
import CacheLog
import CacheLogReports
import FeedCacheLog

struct Verify: AsyncParsableCommand, DatabaseCommand, DocumentCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every record, checkpoint, the state and the key index; exit 0 only when clean.",
        discussion: HelpLayout.keepingIndentation("""
            Checks each record's framing, checksum and compressed body, the order of seqs and \
            recorded times, every checkpoint, that the stored state equals the fold of the log, \
            and that the key index lists every record under its key. Prints each problem with its seq; exits 1 when there is any. Problems in the \
            state, a checkpoint or the key index (fixedByRebuild in JSON) are repaired by 'cachelog rebuild'; \
            a damaged record is not: validate deletes what it leaves unreadable, and the next load \
            caches a fresh copy.

            Examples:
              cachelog verify
              cachelog verify --format json | jq '.problems[].seq'
            """))

    @ParentCommand var parent: CacheLogCommand

    /// Either way, the exit code says whether the database is clean.
    @Option(name: .customLong("format"), help: DocumentFormat.help)
    var formatOption: DocumentFormat?

    func run() async throws {
        try await reading { log in
            let report = try await Terminal.showingProgress("verifying…") { try log.verify() }
            let out = StandardOutput()
            try out.show(VerificationSummary(report), as: format) {
                for problem in report.problems { out.line(Terminal.color("problem", "31") + " \(problem)") }
                let summary = "\(counted(report.recordsChecked, "record")), \(counted(report.checkpointsChecked, "checkpoint")) checked"
                let derived = report.problems.filter(\.fixedByRebuild).count
                let repair = derived == 0 ? "" : "; 'cachelog rebuild' repairs \(derived == report.problems.count ? (derived == 1 ? "it" : "them") : "\(derived) of them")"
                out.line(report.isClean ? Terminal.color("ok", "32") + ": \(summary), no problems" : "\(counted(report.problems.count, "problem")): \(summary)\(repair)")
            }
            out.flush()
            if !report.isClean { throw ExitCode(Exit.failure) }
        }
    }
}
