#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What retention looks like for a database: the policy it follows, where it was set, the bytes
/// it uses against the limit, and what the last pass did.
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

    /// Reads the status inside `txn`.
    @available(*, noasync)
    init(_ txn: Transaction, tables: LogTables) throws {
        let retention = Retention(tables: tables)
        let (policy, seq) = try retention.policy(txn)
        self.policy = policy
        recordedAt = seq
        setBy = try seq.flatMap { seq -> String? in
            guard let record = try txn.get(tables.schema.events, SeqKey.bytes(seq)),
                  let header = try? EventCodec.decodeHeader(record, seq: seq),
                  let metadata = try? EventCodec.metadata(header, in: record, seq: seq)
            else { return nil }
            return RetentionRecord.policy(metadata)?.by
        }
        bytesInUse = try retention.bytesInUse(txn)
        lastPass = try retention.state(txn).report
    }
}
