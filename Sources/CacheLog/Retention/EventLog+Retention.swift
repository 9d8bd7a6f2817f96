#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension EventLog {
    /// What retention looks like for a database: the policy it follows, where it was set, the
    /// bytes it uses against the limit, and what the last pass did.
    public struct RetentionStatus: Sendable, Equatable {
        /// The policy in effect (``RetentionPolicy/default`` when none is recorded).
        public var policy: RetentionPolicy
        /// The `retention` record that set it; nil for the default.
        public var recordedAt: UInt64?
        /// Who set it, as the record says; nil for the default.
        public var setBy: String?
        /// The bytes of the pages the database uses, which the size limit bounds.
        public var bytesInUse: Int
        /// The last pass, or the one under way; nil before the first. Its
        /// ``RetentionReport/unmetLimit`` says when the size limit pressed and could not be met.
        public var lastPass: RetentionReport?
    }

    /// The retention policy this database follows, and the seq of the record that set it (nil:
    /// none is recorded, and ``RetentionPolicy/default`` applies).
    package func retentionPolicy() throws -> (policy: RetentionPolicy, seq: UInt64?) {
        try environment.read { txn in try Retention(tables: tables).policy(txn) }
    }

    /// The policy, its record, the bytes in use and the last pass, in one read.
    public func retentionStatus() throws -> RetentionStatus {
        try environment.read { txn in
            let retention = Retention(tables: tables)
            let (policy, seq) = try retention.policy(txn)
            let by = try seq.flatMap { seq -> String? in
                guard let record = try txn.get(tables.schema.events, SeqKey.bytes(seq)),
                      let header = try? EventCodec.decodeHeader(record, seq: seq),
                      let metadata = try? EventCodec.metadata(header, in: record, seq: seq)
                else { return nil }
                return RetentionRecord.policy(metadata)?.by
            }
            return RetentionStatus(policy: policy, recordedAt: seq, setBy: by, bytesInUse: try retention.bytesInUse(txn),
                                   lastPass: try retention.state(txn).report)
        }
    }

    /// Records `policy` as this database's retention policy, set by `by` (shown by `replay`):
    /// from its commit on, every process that writes applies it. Returns the record's seq.
    ///
    /// - Throws: ``CacheLogError/invalidRetention(detail:)`` for a policy that cannot be
    ///   recorded (``RetentionPolicy/problem``), and what ``append(_:)-([Event])`` throws.
    @discardableResult
    public func setRetentionPolicy(_ policy: RetentionPolicy, by: String) async throws -> UInt64 {
        try await append(.retention(policy, by: by))
    }

    /// Applies the retention policy now, to the end of a pass (the writer runs the same passes by
    /// itself as appends go): history outside the windows goes, then, over the size limit, the
    /// oldest history and live entries. A pass under way, which measures its windows from an
    /// earlier clock, is finished first.
    ///
    /// - Returns: what this call did, every pass it ran in one report: the rest of a pass under
    ///   way (with what its earlier steps did), a pass that ended between the call and its turn
    ///   on the writer, and the pass at now. Its counts are what changed in the log meanwhile,
    ///   unless another process's writer ran a pass of its own at the same time.
    /// - Throws: ``CacheLogError/readOnly`` on a read-only log, and what a write throws.
    @discardableResult
    public func applyRetention() async throws -> RetentionReport? {
        guard !environment.readOnly else { throw CacheLogError.readOnly }
        return try await writer.applyRetention()
    }

    /// Every key whose history retention trimmed, with the seq it now starts at (see
    /// ``historyStart(of:)``), keyed by the key's UTF-8 bytes.
    package func trimmedHistories() throws -> [[UInt8]: UInt64] {
        try environment.read { txn in try Retention(tables: tables).historyStarts(txn) }
    }

    /// Runs the retention pass that appends made due, to its end, when there is one (and the log
    /// applies retention: ``Options/automaticRetention``). The writer runs such passes in the
    /// background, a slice at a time; a process that saves and then ends at once (a command-line
    /// tool, a cron job) calls this before it ends, so that the pass its saves made due is not
    /// left to the next process. Returns what the pass did (as ``applyRetention()`` says), nil
    /// when none was due.
    @discardableResult
    public func applyRetentionIfDue() async throws -> RetentionReport? {
        guard !environment.readOnly else { return nil }
        return try await writer.applyRetention(onlyIfDue: true)
    }

    /// Where the history of `key` starts: the seq before which its records were removed by a
    /// compaction (``compactionBase()``) or by retention. The record at that seq, when it is
    /// stored, is the version the history starts from, not a change within it.
    public func historyStart(of key: String) throws -> UInt64 {
        try environment.read { txn in
            max(try tables.counters.baseSeq(txn), try Retention(tables: tables).historyStart(txn, key: Array(key.utf8)))
        }
    }
}
