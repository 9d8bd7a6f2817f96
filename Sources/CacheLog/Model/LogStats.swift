#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Counts and sizes of a log, as ``EventLog/stats()`` reports them.
public struct LogStats: Sendable, Equatable {
    /// Events counted by kind.
    public struct Counts: Sendable, Equatable {
        /// The number of events of each kind.
        public var put = 0, delete = 0, expire = 0, retention = 0
        /// Events of every kind.
        public var total: Int { put + delete + expire + retention }

        /// No events.
        public init() {}

        mutating func add(_ kind: EventKind) {
            switch kind {
            case .put: put += 1
            case .delete: delete += 1
            case .expire: expire += 1
            case .retention: retention += 1
            }
        }
    }

    /// Every event in the log, by kind (corrupt records are not events: see ``corruptRecords``).
    public var events = Counts()
    /// Counts per key, keyed by the key's UTF-8 bytes: keys are compared as LMDB compares them,
    /// so two keys that differ only in Unicode normalization (which Swift's `String` equality
    /// would merge) are counted apart. `String(decoding: bytes, as: UTF8.self)` gives the key.
    public var byKey: [[UInt8]: Counts] = [:]
    /// Records that failed their checks and were not counted as events.
    public var corruptRecords = 0
    /// Sum of payload sizes before compression.
    public var payloadBytes = 0
    /// Sum of stored record sizes (headers, keys, compressed bodies, checksums).
    public var storedBytes = 0
    /// Compressed bodies of puts only, to compare with `payloadBytes`.
    public var storedPayloadBytes = 0
    /// Rows of the state: the keys with a live value, and any row that damage left naming none
    /// (``EventLog/verify()`` names it).
    public var liveKeys = 0
    /// The oldest sequence number still in the log (after a compaction, not 1); nil when empty.
    public var firstSeq: UInt64?
    /// The newest sequence number (0 for an empty log).
    public var lastSeq: UInt64 = 0
    /// When the oldest event still in the log was recorded; nil when empty.
    public var firstRecordedAt: Date?
    /// When the newest event was recorded; nil when empty.
    public var lastRecordedAt: Date?
    /// The LMDB map size in bytes: the most the database can hold before the map grows.
    public var mapSize = 0
    /// Bytes of the map up to its last page in use (freed pages below it are reused first).
    public var mapUsed = 0

    /// Payload bytes per stored payload byte (higher is better); nil without payloads.
    public var compressionRatio: Double? {
        storedPayloadBytes > 0 ? Double(payloadBytes) / Double(storedPayloadBytes) : nil
    }
}
