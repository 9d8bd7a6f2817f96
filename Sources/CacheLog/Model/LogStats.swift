import Foundation

/// Counts and sizes of a log, as ``CacheLog/stats()`` reports them.
public struct LogStats: Sendable, Equatable {
    public struct Counts: Sendable, Equatable {
        public var put = 0, delete = 0, expire = 0
        public var total: Int { put + delete + expire }

        public init() {}

        mutating func add(_ kind: EventKind) {
            switch kind {
            case .put: put += 1
            case .delete: delete += 1
            case .expire: expire += 1
            }
        }
    }

    public var events = Counts()
    /// Counts per key, keyed by the key's UTF-8 bytes: keys are compared as LMDB compares them,
    /// so two keys that differ only in Unicode normalization (which Swift's `String` equality
    /// would merge) are counted apart. `String(decoding: bytes, as: UTF8.self)` gives the key.
    public var byKey: [[UInt8]: Counts] = [:]
    public var corruptRecords = 0
    /// Sum of payload sizes before compression.
    public var payloadBytes = 0
    /// Sum of stored record sizes (headers, keys, compressed bodies, checksums).
    public var storedBytes = 0
    /// Compressed bodies of puts only, to compare with `payloadBytes`.
    public var storedPayloadBytes = 0
    public var liveKeys = 0
    public var firstSeq: UInt64?
    public var lastSeq: UInt64 = 0
    public var firstRecordedAt: Date?
    public var lastRecordedAt: Date?
    public var mapSize = 0
    public var mapUsed = 0

    /// Payload bytes per stored payload byte (higher is better); nil without payloads.
    public var compressionRatio: Double? {
        storedPayloadBytes > 0 ? Double(payloadBytes) / Double(storedPayloadBytes) : nil
    }
}
