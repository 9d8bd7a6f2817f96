#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The value of a `state` row: u64 seq of the live put, f64 cache timestamp, u32 payload bytes,
/// u64 seq of the record holding the payload bytes.
enum StateRowCodec {
    static let size = 28

    static func encode(_ entry: LogState.Entry) -> [UInt8] {
        var writer = ByteWriter(capacity: size)
        write(entry, to: &writer)
        return writer.bytes
    }

    static func decode(key: String, _ raw: UnsafeRawBufferPointer) -> LogState.Entry? {
        guard raw.count == size else { return nil }
        var reader = ByteReader(raw)
        return read(key: key, from: &reader)
    }

    /// The row's layout, which a checkpoint also uses for each of its entries.
    static func write(_ entry: LogState.Entry, to writer: inout ByteWriter) {
        writer.u64(entry.seq)
        writer.f64(entry.timestamp.storedSeconds)
        writer.u32(UInt32(clamping: entry.bytes))
        writer.u64(entry.payloadSeq)
    }

    static func read(key: String, from reader: inout ByteReader) -> LogState.Entry? {
        guard let seq = reader.u64(), let timestamp = reader.f64(), let bytes = reader.u32(), let payloadSeq = reader.u64() else { return nil }
        return LogState.Entry(key: key, seq: seq, timestamp: Date(storedSeconds: timestamp), bytes: Int(bytes), payloadSeq: payloadSeq)
    }
}
