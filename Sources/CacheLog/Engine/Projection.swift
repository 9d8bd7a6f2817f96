import Foundation

/// The fold of the log: key → live entry. `put` makes the key live; `delete` removes it; `expire`
/// removes it when the live value is the one cached at the expire's timestamp.
/// Folding needs only record headers and keys, never payloads.
struct Projection: Equatable {
    var entries: [String: LiveEntry] = [:]

    /// Applies one record. Throws only for a put whose payload reference is malformed.
    mutating func apply(_ header: EventCodec.Header, record: UnsafeRawBufferPointer, seq: UInt64) throws {
        let key = EventCodec.key(header, in: record)
        switch header.kind {
        case .put:
            entries[key] = LiveEntry(
                key: key, seq: seq, timestamp: Date(storedSeconds: header.timestamp), bytes: header.payloadLength,
                payloadSeq: try EventCodec.payloadSeq(header, in: record, seq: seq))
        case .delete:
            entries.removeValue(forKey: key)
        case .expire:
            // An expire removes only the version it judged: a save that landed between the
            // validation's read and its expire stays live.
            if entries[key]?.timestamp.storedSeconds == header.timestamp { entries.removeValue(forKey: key) }
        }
    }

    /// Entries in LMDB key order (bytewise UTF-8), which is also the order of the `state` table.
    var sorted: [LiveEntry] {
        entries.values.sorted { Self.bytewisePrecedes($0.key, $1.key) }
    }

    /// Bytewise UTF-8 order (LMDB's default key order), compared with memcmp on the strings'
    /// contiguous UTF-8: a checkpoint sorts every live key, and comparing through the generic
    /// `utf8.lexicographicallyPrecedes` cost more than folding the events between checkpoints.
    static func bytewisePrecedes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = min(x.count, y.count)
                if common > 0, let p = x.baseAddress, let q = y.baseAddress {
                    let order = memcmp(p, q, common)
                    if order != 0 { return order < 0 }
                }
                return x.count < y.count
            }
        }
    }

    func state(at seq: UInt64) -> LogState { LogState(seq: seq, entries: sorted) }
}

/// The value of a `state` row: u64 seq of the live put, f64 cache timestamp, u32 payload bytes,
/// u64 seq of the record holding the payload bytes.
enum ProjectionEntryCodec {
    static let size = 28

    static func encode(_ entry: LiveEntry) -> [UInt8] {
        var writer = ByteWriter(capacity: size)
        writer.u64(entry.seq)
        writer.f64(entry.timestamp.storedSeconds)
        writer.u32(UInt32(clamping: entry.bytes))
        writer.u64(entry.payloadSeq)
        return writer.bytes
    }

    static func decode(key: String, _ raw: UnsafeRawBufferPointer) -> LiveEntry? {
        var reader = ByteReader(raw)
        guard raw.count == size, let seq = reader.u64(), let timestamp = reader.f64(), let bytes = reader.u32(),
              let payloadSeq = reader.u64() else { return nil }
        return LiveEntry(key: key, seq: seq, timestamp: Date(storedSeconds: timestamp), bytes: Int(bytes), payloadSeq: payloadSeq)
    }
}

/// A snapshot of the projection after one seq, so that "state as of" folds only the tail after it.
///
///     u32 length of the uncompressed snapshot, zlib stream, u32 CRC-32 of all bytes before it
///     snapshot: u32 entry count, then per entry (sorted by key):
///               u16 key length, key, u64 seq, f64 timestamp, u32 payload bytes, u64 payload seq
enum CheckpointCodec {
    static func encode(_ entries: [LiveEntry]) throws -> [UInt8] {
        var snapshot = ByteWriter(capacity: 4 + entries.count * 40)
        snapshot.u32(UInt32(entries.count))
        for entry in entries {
            let key = Array(entry.key.utf8)
            snapshot.u16(UInt16(key.count))
            snapshot.append(key)
            snapshot.u64(entry.seq)
            snapshot.f64(entry.timestamp.storedSeconds)
            snapshot.u32(UInt32(clamping: entry.bytes))
            snapshot.u64(entry.payloadSeq)
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

    static func decode(_ raw: UnsafeRawBufferPointer, seq: UInt64) throws -> Projection {
        func corrupt(_ detail: String) -> CacheLogError { .corruptCheckpoint(seq: seq, detail: detail) }
        guard raw.count >= 8 else { throw corrupt("too short") }
        let stored = UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: raw.count - 4, as: UInt32.self))
        guard stored == Zlib.crc32(UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - 4)])) else { throw corrupt("checksum mismatch") }
        let length = Int(UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self)))
        guard let snapshot = Zlib.decompress(UnsafeRawBufferPointer(rebasing: raw[4..<(raw.count - 4)]), expectedSize: length) else {
            throw corrupt("does not inflate")
        }
        return try snapshot.withUnsafeBytes { bytes in
            var reader = ByteReader(bytes)
            guard let count = reader.u32() else { throw corrupt("no entry count") }
            var projection = Projection()
            projection.entries.reserveCapacity(Int(count))
            for _ in 0..<count {
                guard let keyLength = reader.u16(), let key = reader.bytes(Int(keyLength)),
                      let entrySeq = reader.u64(), let timestamp = reader.f64(), let bytes = reader.u32(),
                      let payloadSeq = reader.u64()
                else { throw corrupt("truncated entry") }
                let name = String(decoding: key, as: UTF8.self)
                projection.entries[name] = LiveEntry(
                    key: name, seq: entrySeq, timestamp: Date(storedSeconds: timestamp), bytes: Int(bytes), payloadSeq: payloadSeq)
            }
            return projection
        }
    }
}
