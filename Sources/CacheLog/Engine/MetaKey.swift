/// Keys of the `meta` table.
enum MetaKey {
    static let magic = Array("magic".utf8)
    /// u32: the database format (``formatValue(_:)``, ``format(in:)``).
    static let format = Array("format".utf8)
    /// u64: the last sequence number ever assigned (survives compaction of the tail records).
    static let lastSeq = Array("lastSeq".utf8)
    /// f64: the last `recordedAt`, so recorded time never goes backward in the log.
    static let lastRecordedAt = Array("lastRecordedAt".utf8)
    /// u64: seq of the newest checkpoint.
    static let checkpointSeq = Array("checkpointSeq".utf8)
    /// u64: the checkpoint that stands for everything compacted away (0: nothing compacted).
    static let baseSeq = Array("baseSeq".utf8)
    /// u64: seq of the newest `retention` record (absent: none recorded, the default applies).
    static let retentionSeq = Array("retentionSeq".utf8)
    /// f64 clock, u64 walked through, u64 pressure bound: the retention pass under way (absent: none).
    static let retentionPass = Array("retentionPass".utf8)
    /// f64 started at, u64 removed, u64 bytes freed, u64 evicted, u8 finished: what the last pass did.
    static let retentionReport = Array("retentionReport".utf8)
    /// u64: the highest seq retention removed: up to it, a missing seq is history retention let go,
    /// not damage (``EventLog/verify()``).
    static let retentionZone = Array("retentionZone".utf8)
    /// u64: the `retentionSeq` the last pass started under (a newer policy makes a pass due).
    static let retentionApplied = Array("retentionApplied".utf8)
    /// u64: the bytes in use when the last pass ended (the next is due after some growth).
    static let retentionUsedAfter = Array("retentionUsedAfter".utf8)

    /// The stored value of `format`: u32 big-endian.
    static func formatValue(_ version: UInt32) -> [UInt8] { withUnsafeBytes(of: version.bigEndian) { Array($0) } }

    /// The version a stored `format` value holds; nil when it is not 4 bytes.
    static func format(in raw: UnsafeRawBufferPointer) -> UInt32? {
        raw.count == 4 ? UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self)) : nil
    }
}
