#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension EventLog {
    /// Checks every record (framing, checksum, inflate, kind, seq order, recorded-time order),
    /// every checkpoint, that the stored state equals the fold of the log, that the key index
    /// lists every record under its key, and that the `refs` table lists every put that needs
    /// another record's payload (a reference, a delta) under that record.
    ///
    /// Runs in one read transaction, so it checks one consistent snapshot while appends go on.
    /// Without the lock file (a reader who may not write it), it checks a private copy of the
    /// newest commit (``Options/readOnly``).
    /// - Throws: ``CacheLogError/damaged(path:page:detail:)`` when a page of the data file is
    ///   not one LMDB could follow (the check every open makes, made again on this snapshot).
    public func verify() throws -> VerifyReport {
        for _ in 0..<PageTreeCheck.attempts {
            if let report = try verifySnapshot() { return report }
        }
        throw CacheLogError.overlappedWrites(path: path)
    }

    /// Verifies the newest commit; nil when other processes committed twice before its pages
    /// could be checked.
    private func verifySnapshot() throws -> VerifyReport? {
        try environment.read { txn in
            guard try environment.checkPages(txn) else { return nil }
            var verification = Verification(txn: txn, tables: tables)
            try verification.checkCounters()
            try verification.checkCheckpoints()
            try verification.checkRecords()
            try verification.checkState()
            try verification.checkKeyIndex()
            try verification.checkRefs()
            return verification.report()
        }
    }
}
