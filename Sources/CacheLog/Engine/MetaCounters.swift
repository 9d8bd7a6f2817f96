#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The counters the `meta` table keeps (the last seq, the compaction base, the last time
/// recorded), each refused when it is beyond any real log.
struct MetaCounters {
    /// The table handles.
    let schema: Tables

    /// The counter `key` of `meta` (0 when there is none, or it is not 8 bytes).
    func value(_ txn: Transaction, _ key: [UInt8]) throws -> UInt64 {
        guard let raw = try txn.get(schema.meta, key), raw.count == 8 else { return 0 }
        return UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))
    }

    /// Sets the counter `key` of `meta` to `value`.
    func set(_ txn: Transaction, _ key: [UInt8], _ value: UInt64) throws {
        try txn.put(schema.meta, key, SeqKey.bytes(value))
    }

    /// The last `recordedAt` appended, as a stamp; a value that is not a finite number is damage,
    /// and counts as none, so that it cannot stamp every later event.
    func lastRecordedAt(_ txn: Transaction) throws -> Double {
        guard let value = try storedLastRecordedAt(txn), value.isFinite else { return -.infinity }
        return value
    }

    /// The last `recordedAt` as `meta` holds it: nil when there is none, NaN when it does not decode.
    func storedLastRecordedAt(_ txn: Transaction) throws -> Double? {
        guard let raw = try txn.get(schema.meta, MetaKey.lastRecordedAt) else { return nil }
        return MetaStamp.decode(raw) ?? .nan
    }

    /// Seqs past this are not a count of events but damage (a log would take a hundred
    /// thousand years to get there at a million events a second), and keeping every seq below it
    /// keeps the arithmetic on seqs (+1, ranges) far from overflowing.
    static let maxSeq: UInt64 = 1 << 62

    /// The last seq appended, from `meta`, refused when it is beyond any real log.
    func lastSeq(_ txn: Transaction) throws -> UInt64 {
        try boundedSeq(txn, MetaKey.lastSeq, "lastSeq")
    }

    /// The compaction base, from `meta` (0: nothing compacted).
    func baseSeq(_ txn: Transaction) throws -> UInt64 {
        let base = try boundedSeq(txn, MetaKey.baseSeq, "baseSeq")
        let last = try lastSeq(txn)
        guard base <= last else { throw CacheLogError.corruptMeta(detail: "baseSeq \(base) is after lastSeq \(last)") }
        return base
    }

    /// The seq of the last record in the log, if any.
    func lastRecordSeq(_ txn: Transaction) throws -> UInt64? {
        try txn.withCursor(schema.events, from: .last) { rows in try rows.next().flatMap { SeqKey.decode($0.key) } }
    }

    /// Sets the counters in `meta` that contradict the log to what the log says: `lastSeq` to the
    /// last record's seq when it is below it or impossible, `lastRecordedAt` to the last
    /// record's time when it is not a number. Returns the names of the counters it set.
    func restoreCounters(_ txn: Transaction) throws -> [String] {
        var restored: [String] = []
        let inLog = try lastRecordSeq(txn) ?? 0
        guard inLog <= Self.maxSeq else { throw CacheLogError.corruptMeta(detail: "the last record's seq is \(inLog)") }
        let stored = try value(txn, MetaKey.lastSeq)
        // Compaction may remove the last records, so a lastSeq above the last record is fine.
        if stored > Self.maxSeq || stored < inLog {
            try set(txn, MetaKey.lastSeq, inLog)
            restored.append("lastSeq")
        }
        if try storedLastRecordedAt(txn)?.isFinite == false {
            let time = try txn.get(schema.events, SeqKey.bytes(inLog)).flatMap(EventCodec.recordedAt).flatMap { $0.isFinite ? $0 : nil } ?? 0
            try txn.put(schema.meta, MetaKey.lastRecordedAt, MetaStamp.encode(time))
            restored.append("lastRecordedAt")
        }
        return restored
    }

    private func boundedSeq(_ txn: Transaction, _ key: [UInt8], _ name: String) throws -> UInt64 {
        let stored = try value(txn, key)
        guard stored <= Self.maxSeq else { throw CacheLogError.corruptMeta(detail: "\(name) is \(stored)") }
        return stored
    }
}
