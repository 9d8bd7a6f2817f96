#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The fold of the log: key → live entry. `put` makes the key live; `delete` removes it; `expire`
/// removes it when the live value is the one cached at the expire's timestamp.
/// Folding needs only record headers and keys, never payloads.
///
/// Keys are looked up by their raw bytes in an open-addressing table, and a key keeps its slot
/// (and its String) after it is deleted: a rebuild folds millions of records, almost all about
/// keys it has already seen, and a String plus a dictionary update per record was most of its time.
/// Memory grows with the keys ever seen, not with the records.
struct StateFold: Equatable {
    /// What a slot holds for a live key: plain values, so updating one touches no reference count.
    private struct Live {
        var seq: UInt64
        var timestamp: Double
        var bytes: Int
        var payloadSeq: UInt64
    }

    /// Index into `names` per table slot, -1 when empty. The capacity is a power of two.
    private var slots = [Int32](repeating: -1, count: 16)
    /// Every key ever seen: its bytes (in `arena`), its hash, its String, and its live entry if any.
    private var arena: [UInt8] = []
    private var spans: [Range<Int>] = []
    private var hashes: [UInt64] = []
    private var names: [String] = []
    private var live: [Live?] = []
    /// Every key's index in LMDB key order (bytewise). Keys never leave the table, so a checkpoint
    /// walks this instead of sorting every live key again; keys seen since the last walk wait in
    /// `unordered` and are sorted and merged in once (`ordered()`).
    private var order: [Int32] = []
    private var unordered: [Int32] = []
    /// Number of live keys.
    private(set) var count = 0

    /// Equal when the same keys, byte for byte, hold the same entries (Swift's String equality
    /// would treat canonically equivalent keys as one; LMDB keys are bytes).
    static func == (a: StateFold, b: StateFold) -> Bool {
        var a = a, b = b
        return LogState.Entry.sameEntries(a.ordered(), b.ordered())
    }

    private func entry(_ index: Int) -> LogState.Entry? {
        live[index].map {
            LogState.Entry(key: names[index], seq: $0.seq, timestamp: Date(stamp: $0.timestamp), bytes: $0.bytes, payloadSeq: $0.payloadSeq)
        }
    }

    /// The live entry of the key with exactly these bytes.
    func entry(forKey key: [UInt8]) -> LogState.Entry? {
        key.withUnsafeBytes { find($0) }.flatMap(entry)
    }

    /// The cache timestamp of the key's live entry, bits as stored.
    func timestampBits(forKey key: [UInt8]) -> UInt64? {
        key.withUnsafeBytes { find($0) }.flatMap { live[$0]?.timestamp.bitPattern }
    }

    /// Makes `entry` the live entry of the key with exactly these bytes (checkpoint decoding).
    /// `entry.key` is not used: a key damaged into bytes that are not UTF-8 has lost them there.
    mutating func set(_ entry: LogState.Entry, keyBytes: UnsafeRawBufferPointer) {
        let index = findOrInsert(keyBytes)
        if live[index] == nil { count += 1 }
        live[index] = Live(seq: entry.seq, timestamp: entry.timestamp.stamp, bytes: entry.bytes, payloadSeq: entry.payloadSeq)
    }

    /// Applies one record. Throws only for a put whose payload reference is malformed.
    mutating func apply(_ header: EventCodec.Header, record: UnsafeRawBufferPointer, seq: UInt64) throws {
        // A record about no key (the policy's) is no part of the state.
        guard header.kind.isAboutAKey else { return }
        let keyBytes = EventCodec.keyBytes(header, in: record)
        let hash = Self.keyHash(keyBytes)
        switch header.kind {
        case .put:
            // Decoded first: a malformed reference must leave the state untouched.
            let payloadSeq = try EventCodec.payloadSeq(header, in: record, seq: seq)
            let index = findOrInsert(keyBytes, hash: hash)
            if live[index] == nil { count += 1 }
            live[index] = Live(seq: seq, timestamp: header.timestamp, bytes: header.payloadLength, payloadSeq: payloadSeq)
            // A delta's base is no part of the state (its put holds its own payload, as
            // instructions): a damaged one is the payload read's to report, not the fold's.
            if let source = header.isDelta ? try? EventCodec.payloadSource(header, in: record, seq: seq) : payloadSeq != seq ? payloadSeq : nil {
                sources.add(keyHash: Self.sourceHash(source), seq: seq)
            }
        case .delete:
            if let index = find(keyBytes, hash: hash).index, live[index] != nil { remove(index) }
        case .expire:
            // An expire removes only the version it judged: a save that landed between the
            // validation's read and its expire stays live.
            // Bit patterns, as the append path compares them (a NaN equals itself there too).
            if let index = find(keyBytes, hash: hash).index, live[index]?.timestamp.bitPattern == header.timestamp.bitPattern { remove(index) }
        case .retention:
            break
        }
        applied.add(keyHash: hash, seq: seq)
    }

    /// The records applied so far (not those of a checkpoint it started from), for comparing with
    /// the key index.
    private(set) var applied = RecordDigest()
    /// The (source, put) pairs of the puts applied so far that need another record's payload
    /// bytes (a reference, a delta), for comparing with the `refs` table.
    private(set) var sources = RecordDigest()

    /// What a source seq stands in for in a ``RecordDigest`` (which mixes a key hash with a seq).
    static func sourceHash(_ source: UInt64) -> UInt64 { source &* 0xD6E8_FEB8_6659_FD93 }

    private mutating func remove(_ index: Int) {
        live[index] = nil
        count -= 1
    }

    // MARK: the table

    /// FNV-1a: cheap for short keys, and every byte counts (keys often share long prefixes).
    static func keyHash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash
    }

    private func find(_ bytes: UnsafeRawBufferPointer) -> Int? {
        find(bytes, hash: Self.keyHash(bytes)).index
    }

    /// The index of the key, or the empty slot where it would go.
    private func find(_ bytes: UnsafeRawBufferPointer, hash: UInt64) -> (index: Int?, slot: Int) {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        return arena.withUnsafeBytes { stored in
            while true {
                let index = Int(slots[slot])
                if index < 0 { return (nil, slot) }
                let span = spans[index]
                if hashes[index] == hash && Self.same(stored, span, bytes) { return (index, slot) }
                slot = (slot + 1) & mask
            }
        }
    }

    private static func same(_ stored: UnsafeRawBufferPointer, _ span: Range<Int>, _ bytes: UnsafeRawBufferPointer) -> Bool {
        EventCodec.sameBytes(UnsafeRawBufferPointer(rebasing: stored[span]), bytes)
    }

    private mutating func findOrInsert(_ bytes: UnsafeRawBufferPointer) -> Int {
        findOrInsert(bytes, hash: Self.keyHash(bytes))
    }

    private mutating func findOrInsert(_ bytes: UnsafeRawBufferPointer, hash: UInt64) -> Int {
        let (found, slot) = find(bytes, hash: hash)
        if let found { return found }
        let index = names.count
        spans.append(arena.count..<(arena.count + bytes.count))
        arena.append(contentsOf: bytes)
        names.append(String(decoding: bytes, as: UTF8.self))
        hashes.append(hash)
        live.append(nil)
        slots[slot] = Int32(index)
        unordered.append(Int32(index))
        // Keep the table at most half full, so probes stay short.
        if names.count * 2 > slots.count { grow() }
        return index
    }

    /// Bytewise order, shorter first on a common prefix: LMDB's default key order.
    private static func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let common = min(a.count, b.count)
        if common > 0, let p = a.baseAddress, let q = b.baseAddress {
            let result = memcmp(p, q, common)
            if result != 0 { return result < 0 }
        }
        return a.count < b.count
    }

    private mutating func grow() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        let mask = slots.count - 1
        for (index, hash) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(index)
        }
    }

    /// Entries in LMDB key order (bytewise UTF-8), which is also the order of the `state` table.
    /// The live entries in LMDB key order (bytewise UTF-8), which is also the order of the `state`
    /// table. New keys are sorted among themselves and merged in: O(n + k log k) for k new keys.
    mutating func ordered() -> [LogState.Entry] {
        if !unordered.isEmpty {
            let fresh = arena.withUnsafeBytes { stored in
                unordered.sorted { Self.precedes(key(stored, $0), key(stored, $1)) }
            }
            var merged: [Int32] = []
            merged.reserveCapacity(order.count + fresh.count)
            arena.withUnsafeBytes { stored in
                var i = 0, j = 0
                while i < order.count || j < fresh.count {
                    if j == fresh.count || (i < order.count && Self.precedes(key(stored, order[i]), key(stored, fresh[j]))) {
                        merged.append(order[i]); i += 1
                    } else {
                        merged.append(fresh[j]); j += 1
                    }
                }
            }
            order = merged
            unordered.removeAll()
        }
        return order.compactMap { entry(Int($0)) }
    }

    /// A live entry with its key's bytes as the log holds them.
    typealias Row = (key: [UInt8], entry: LogState.Entry)

    /// ``ordered()`` with each key's bytes as the log holds them: a key damaged into bytes that
    /// are not UTF-8 keeps them here, where its String has replacement characters instead.
    mutating func orderedRows() -> [Row] {
        _ = ordered()
        return order.compactMap { index in entry(Int(index)).map { (Array(arena[spans[Int(index)]]), $0) } }
    }

    private func key(_ stored: UnsafeRawBufferPointer, _ index: Int32) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: stored[spans[Int(index)]])
    }

    mutating func state(at seq: UInt64) -> LogState { LogState(seq: seq, entries: ordered()) }
}
