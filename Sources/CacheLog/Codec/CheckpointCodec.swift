#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A snapshot of the state after one seq, so that "state as of" folds only the tail after it.
///
///     u32 length of the uncompressed snapshot, zlib stream, u32 CRC-32 of all bytes before it
///     snapshot: u32 0xFFFFFFFF, u32 entry count, then per entry (sorted by key):
///               u16 key length, key, u64 seq, f64 timestamp (a stamp), u32 payload bytes, u64 payload seq
///
/// A snapshot written before format 4 starts with its entry count, and its timestamps are seconds
/// since 1970; no snapshot can hold 2^32 − 1 entries, so the marker tells the two apart.
enum CheckpointCodec {
    /// What a snapshot whose timestamps are stamps starts with.
    static let stampsMarker = UInt32.max

    /// `rows` carry each key's bytes as the log holds them, so a key that is not valid UTF-8
    /// round-trips unchanged (its String would grow by replacement characters past LMDB's limit).
    static func encode(_ rows: [StateFold.Row]) throws -> [UInt8] {
        var snapshot = ByteWriter(capacity: 8 + rows.count * 40)
        guard let count = UInt32(exactly: rows.count) else {
            throw CacheLogError.corruptCheckpoint(seq: 0, detail: "more than 2^32 live keys")
        }
        snapshot.u32(stampsMarker)
        snapshot.u32(count)
        for (key, entry) in rows {
            // LMDB keys are at most 511 bytes, so every key fits its u16 length.
            guard let length = UInt16(exactly: key.count) else {
                throw CacheLogError.corruptCheckpoint(seq: entry.seq, detail: "a key of \(key.count) bytes")
            }
            snapshot.u16(length)
            snapshot.append(key)
            StateRowCodec.write(entry, to: &snapshot)
        }
        var framed = ByteWriter()
        framed.u32(UInt32(snapshot.bytes.count))
        // Level 1: a checkpoint is derived data, written every few thousand events and by every
        // rebuild; zlib's fastest level keeps its cost small beside the fold (any zlib stream reads back).
        framed.append(try snapshot.bytes.withUnsafeBytes { try Zlib.compress($0, level: 1) })
        let crc = framed.bytes.withUnsafeBytes { Zlib.crc32($0) }
        framed.u32(crc)
        return framed.bytes
    }

    static func decode(_ raw: UnsafeRawBufferPointer, seq: UInt64) throws -> StateFold {
        var fold = StateFold()
        try forEachEntry(raw, seq: seq) { key, entry in
            fold.set(entry, keyBytes: key)
            return true
        }
        return fold
    }

    /// The entry of one key in the checkpoint, without building the whole state: what reading
    /// one key's history needs from a compaction base of many keys.
    static func entry(forKey key: [UInt8], in raw: UnsafeRawBufferPointer, seq: UInt64) throws -> LogState.Entry? {
        var found: LogState.Entry?
        try forEachEntry(raw, seq: seq) { stored, entry in
            guard stored.elementsEqual(key) else { return true }
            found = entry
            return false
        }
        return found
    }

    /// Checks and inflates the checkpoint, then calls `body` with each entry (its key's bytes,
    /// valid during the call) until `body` returns false.
    private static func forEachEntry(_ raw: UnsafeRawBufferPointer, seq: UInt64,
                                     _ body: (UnsafeRawBufferPointer, LogState.Entry) -> Bool) throws {
        func corrupt(_ detail: String) -> CacheLogError { .corruptCheckpoint(seq: seq, detail: detail) }
        guard raw.count >= 8 else { throw corrupt("too short") }
        let stored = UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: raw.count - 4, as: UInt32.self))
        guard stored == Zlib.crc32(UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - 4)])) else { throw corrupt("checksum mismatch") }
        let length = Int(UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self)))
        guard let snapshot = Zlib.decompress(UnsafeRawBufferPointer(rebasing: raw[4..<(raw.count - 4)]), expectedSize: length) else {
            throw corrupt("does not inflate")
        }
        try snapshot.withUnsafeBytes { bytes in
            var reader = ByteReader(bytes)
            guard var count = reader.u32() else { throw corrupt("no entry count") }
            let since1970 = count != stampsMarker
            if !since1970 {
                guard let stored = reader.u32() else { throw corrupt("no entry count") }
                count = stored
            }
            for _ in 0..<count {
                guard let keyLength = reader.u16(), let key = reader.bytes(Int(keyLength)),
                      let entry = StateRowCodec.read(key: String(decoding: key, as: UTF8.self), from: &reader, since1970: since1970)
                else { throw corrupt("truncated entry") }
                guard body(key, entry) else { return }
            }
        }
    }
}
