import CacheLog

/// `verify --format json`: whether the database is clean, what was checked, and each problem.
struct VerificationSummary: Encodable {
    struct Problem: Encodable {
        @NullWhenNil var seq: UInt64?
        let message: String
        let fixedByRebuild: Bool
    }

    let clean: Bool
    let records, checkpoints: Int
    let problems: [Problem]

    init(_ report: VerifyReport) {
        (clean, records, checkpoints) = (report.isClean, report.recordsChecked, report.checkpointsChecked)
        problems = report.problems.map { Problem(seq: $0.seq, message: $0.message, fixedByRebuild: $0.fixedByRebuild) }
    }
}
