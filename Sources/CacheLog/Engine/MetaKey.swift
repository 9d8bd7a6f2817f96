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
    /// Where retention stands, as one value (``RetentionState``).
    static let retention = Array("retention".utf8)

    /// The stored value of `format`: u32 big-endian.
    static func formatValue(_ version: UInt32) -> [UInt8] { withUnsafeBytes(of: version.bigEndian) { Array($0) } }

    /// The version a stored `format` value holds; nil when it is not 4 bytes.
    static func format(in raw: UnsafeRawBufferPointer) -> UInt32? {
        raw.count == 4 ? UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self)) : nil
    }
}
