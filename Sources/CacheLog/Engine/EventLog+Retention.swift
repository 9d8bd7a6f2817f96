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
        /// The last pass, or the one under way; nil before the first.
        public var lastPass: RetentionReport?
    }

    /// The retention policy this database follows, and the seq of the record that set it (nil:
    /// none is recorded, and ``RetentionPolicy/default`` applies).
    public func retentionPolicy() throws -> (policy: RetentionPolicy, seq: UInt64?) {
        try environment.read { txn in try tables.retentionPolicy(txn) }
    }

    /// The policy, its record, the bytes in use and the last pass, in one read.
    public func retentionStatus() throws -> RetentionStatus {
        try environment.read { txn in
            let (policy, seq) = try tables.retentionPolicy(txn)
            let by = try seq.flatMap { seq -> String? in
                guard let record = try txn.get(tables.events, SeqKey.bytes(seq)),
                      let header = try? EventCodec.decodeHeader(record, seq: seq),
                      let metadata = try? EventCodec.metadata(header, in: record, seq: seq)
                else { return nil }
                return RetentionRecord.policy(metadata)?.by
            }
            return RetentionStatus(policy: policy, recordedAt: seq, setBy: by, bytesInUse: try tables.bytesInUse(txn),
                                   lastPass: try tables.lastPass(txn))
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
    /// earlier clock, is finished first. Returns what the last pass did.
    @discardableResult
    public func applyRetention() async throws -> RetentionReport? {
        guard !environment.readOnly else { throw CacheLogError.readOnly }
        try await writer.applyRetention()
        return try retentionStatus().lastPass
    }

    /// Every key whose history retention trimmed, with the seq it now starts at (see
    /// ``historyStart(of:)``), keyed by the key's UTF-8 bytes.
    public func trimmedHistories() throws -> [[UInt8]: UInt64] {
        try environment.read { txn in
            guard let trims = tables.trims else { return [:] }
            var starts: [[UInt8]: UInt64] = [:]
            try txn.forEachRow(trims) { row in
                guard row.value.count == 8 else { return }
                starts[Array(row.key)] = UInt64(bigEndian: row.value.loadUnaligned(as: UInt64.self))
            }
            return starts
        }
    }

    /// Runs the retention pass that appends made due, to its end, when there is one (and the log
    /// applies retention: ``Options/automaticRetention``). The writer runs such passes in the
    /// background, a slice at a time; a process that saves and then ends at once (a command-line
    /// tool, a cron job) calls this before it ends, so that the pass its saves made due is not
    /// left to the next process. Returns what the pass did, nil when none was due.
    @discardableResult
    public func applyRetentionIfDue() async throws -> RetentionReport? {
        guard !environment.readOnly else { return nil }
        let before = try retentionStatus().lastPass
        try await writer.applyRetention(onlyIfDue: true)
        let after = try retentionStatus().lastPass
        return after == before ? nil : after
    }

    /// Where the history of `key` starts: the seq before which its records were removed by a
    /// compaction (``compactionBase()``) or by retention. The record at that seq, when it is
    /// stored, is the version the history starts from, not a change within it.
    public func historyStart(of key: String) throws -> UInt64 {
        try environment.read { txn in
            max(try tables.baseSeq(txn), try tables.trimmedThrough(txn, key: Array(key.utf8)))
        }
    }
}
