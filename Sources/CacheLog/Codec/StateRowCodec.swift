#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The value of a `state` row: u8 row version 2, u64 seq of the live put, f64 cache timestamp
/// (a ``Foundation/Date/stamp``), u32 payload bytes, u64 seq of the record holding the payload
/// bytes. A row of 28 bytes, without the version, was written before format 4: its timestamp is
/// seconds since 1970, and its first byte, the top of a seq below 2^56, is 0, which tells it from
/// a newer row cut short (that starts with its version).
enum StateRowCodec {
    static let size = 29
    static let legacySize = 28
    static let rowVersion: UInt8 = 2

    static func encode(_ entry: LogState.Entry) -> [UInt8] {
        var writer = ByteWriter(capacity: size)
        writer.u8(rowVersion)
        write(entry, to: &writer)
        return writer.bytes
    }

    static func decode(key: String, _ raw: UnsafeRawBufferPointer) -> LogState.Entry? {
        var reader = ByteReader(raw)
        switch raw.count {
        case size:
            guard reader.u8() == rowVersion else { return nil }
            return read(key: key, from: &reader)
        case legacySize:
            guard raw[0] == 0 else { return nil }
            return read(key: key, from: &reader, since1970: true)
        default:
            return nil
        }
    }

    /// The row's layout after its version byte, which a checkpoint also uses for each of its entries.
    static func write(_ entry: LogState.Entry, to writer: inout ByteWriter) {
        writer.u64(entry.seq)
        writer.f64(entry.timestamp.stamp)
        writer.u32(UInt32(clamping: entry.bytes))
        writer.u64(entry.payloadSeq)
    }

    /// Reads ``write(_:to:)``'s layout; `since1970` for one written before format 4.
    static func read(key: String, from reader: inout ByteReader, since1970: Bool = false) -> LogState.Entry? {
        guard let seq = reader.u64(), let stored = reader.f64(), let bytes = reader.u32(), let payloadSeq = reader.u64() else { return nil }
        let timestamp = Date(stamp: since1970 ? LegacyStamp.stamp(since1970: stored) : stored)
        return LogState.Entry(key: key, seq: seq, timestamp: timestamp, bytes: Int(bytes), payloadSeq: payloadSeq)
    }
}
