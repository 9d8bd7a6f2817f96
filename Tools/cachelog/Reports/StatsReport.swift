import CacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `stats --format json`: event counts in all and per key, sizes, compression and the map.
struct StatsReport: Encodable {
    struct Counts: Encodable {
        let put, delete, expire: Int
        /// Retention records are about no key: counted for the whole log only.
        let retention: Int?
        let total: Int

        init(_ counts: LogStats.Counts, retention: Bool = false) {
            (put, delete, expire, total) = (counts.put, counts.delete, counts.expire, counts.total)
            self.retention = retention ? counts.retention : nil
        }
    }

    /// The counts per key, as one object keyed by the keys in byte order (the log keys by bytes:
    /// keys that differ only in Unicode normalization stay apart).
    struct KeyCounts: Encodable {
        let stats: LogStats

        private struct Name: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Name.self)
            for key in stats.sortedKeys {
                try container.encode(Counts(stats.byKey[key] ?? .init()), forKey: Name(stringValue: String(decoding: key, as: UTF8.self)))
            }
        }
    }

    let events: Counts
    let keys: KeyCounts
    let liveKeys, corruptRecords, payloadBytes, storedBytes, storedPayloadBytes: Int
    /// Two decimals.
    @NullWhenNil var compressionRatio: Double?
    @NullWhenNil var firstSeq: UInt64?
    let lastSeq: UInt64
    @NullWhenNil var firstAt: Date?
    @NullWhenNil var lastAt: Date?
    let mapSize, mapUsed: Int
    /// The bytes in use against the size limit, the policy and the last pass (``RetentionSummary``).
    let retention: RetentionSummary

    init(_ stats: LogStats, retention: RetentionStatus) {
        self.retention = RetentionSummary(status: retention)
        events = Counts(stats.events, retention: true)
        keys = KeyCounts(stats: stats)
        (liveKeys, corruptRecords, payloadBytes) = (stats.liveKeys, stats.corruptRecords, stats.payloadBytes)
        (storedBytes, storedPayloadBytes) = (stats.storedBytes, stats.storedPayloadBytes)
        compressionRatio = stats.compressionRatio.map { ($0 * 100).rounded() / 100 }
        (firstSeq, lastSeq) = (stats.firstSeq, stats.lastSeq)
        (firstAt, lastAt) = (stats.firstRecordedAt, stats.lastRecordedAt)
        (mapSize, mapUsed) = (stats.mapSize, stats.mapUsed)
    }
}

extension LogStats {
    /// The keys in byte order, as the log keys them: never merging keys that differ only in
    /// Unicode normalization.
    var sortedKeys: [[UInt8]] { byKey.keys.sorted { $0.lexicographicallyPrecedes($1) } }
}
