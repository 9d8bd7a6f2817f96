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

/// Frames events as stored records. The layout (all numbers big-endian) is documented for readers
/// in other languages in `CacheLog.docc/Format.md`; change one, change both.
///
///     offset size field
///     0      1    record format version: 1, or 2 for a record that uses what version 1 lacks
///                 (kind 4 retention, delete reason 4 evicted), so that a reader that predates
///                 it refuses it by its version instead of misreading it
///     1      1    kind: 1 put, 2 delete, 3 expire, 4 retention (version 2)
///     2      1    flags: bit 0 set when the body is zlib-compressed; bit 1 set when the body is
///                 a reference: the u64 seq of an earlier put of the same key whose payload is identical;
///                 bit 2 set when a put records its max age; bit 3 set when metadata follows the body
///     3      1    delete reason: 1 replaced, 2 explicit, 3 retrieval-error, 4 evicted (version 2);
///                 0 otherwise
///     4      8    recordedAt: f64 seconds since 1970
///     12     8    timestamp: f64 seconds since 1970 (put, expire; 0 for delete)
///     20     8    maxAge: f64 seconds (expire; put with flag bit 2; 0 otherwise)
///     28     2    key length K (u16)
///     30     4    payload length P, uncompressed (u32)
///     34     4    body length B, as stored (u32)
///     38     K    key, UTF-8
///     38+K   B    body: zlib stream of the payload (put), or an 8-byte reference; empty otherwise
///     38+K+B M    metadata, only with flag bit 3: u16 length, then per name (sorted by bytes)
///                 u8 name length, name, u16 value length, value (UTF-8); M counts the u16 too
///     38+K+B+M 4  CRC-32 (zlib's crc32) of every byte before it
///
/// Everything the state needs sits in the fixed header and the key, so a fold never inflates.
enum EventCodec {
    static let formatVersion: UInt8 = 1
    /// The record version of records that use what version 1 lacks; the newest this build reads.
    static let newestRecordVersion: UInt8 = 2
    static let headerSize = 38
    static let checksumSize = 4
    static let compressedFlag: UInt8 = 1
    static let referenceFlag: UInt8 = 2
    static let maxAgeFlag: UInt8 = 4
    static let metadataFlag: UInt8 = 8

    /// An event validated and compressed before it reaches the writer, so that compression runs on
    /// the appending task and the single writer only frames and stores.
    struct Prepared: Sendable {
        var kind: EventKind
        var key: [UInt8]
        var reason: UInt8
        var timestamp: Double
        var maxAge: Double
        var payloadLength: UInt32
        var body: [UInt8]
        /// Flag bit 2 when a put records its max age.
        var recordsMaxAge = false
        /// The metadata block, length prefix included; empty when there is none.
        var metadata: [UInt8] = []
        /// The record format version it needs: 1 unless it uses what version 1 lacks.
        var recordVersion: UInt8 = formatVersion
    }

    static func prepare(_ event: Event, maxKeySize: Int, level: Int32 = Zlib.defaultLevel) throws -> Prepared {
        let key = Array(event.key.utf8)
        // Every event but a retention is about a key, which LMDB can hold.
        if event.kind != .retention {
            guard !key.isEmpty else { throw CacheLogError.emptyKey }
            guard key.count <= maxKeySize else { throw CacheLogError.keyTooLong(length: key.count, maximum: maxKeySize) }
        }
        switch event {
        case .put(_, let payload, let timestamp, let maxAge, let metadata):
            guard payload.count <= Int(UInt32.max) else { throw CacheLogError.payloadTooLarge(length: payload.count) }
            let body = try payload.withUnsafeBytes { try Zlib.compress($0, level: level) }
            // Incompressible data grows a little under zlib; the framed body must still fit its u32.
            guard body.count + key.count + headerSize + checksumSize <= Int(UInt32.max) else {
                throw CacheLogError.payloadTooLarge(length: payload.count)
            }
            return Prepared(kind: .put, key: key, reason: 0, timestamp: timestamp.storedSeconds, maxAge: maxAge ?? 0,
                            payloadLength: UInt32(payload.count), body: body, recordsMaxAge: maxAge != nil,
                            metadata: try encodeMetadata(metadata))
        case .delete(_, let reason):
            return Prepared(kind: .delete, key: key, reason: reason.rawValue, timestamp: 0, maxAge: 0,
                            payloadLength: 0, body: [], recordVersion: reason == .evicted ? newestRecordVersion : formatVersion)
        case .expire(_, let timestamp, let maxAge):
            return Prepared(kind: .expire, key: key, reason: 0, timestamp: timestamp.storedSeconds, maxAge: maxAge,
                            payloadLength: 0, body: [])
        case .retention(let policy, let by):
            if let problem = policy.problem { throw CacheLogError.invalidRetention(detail: problem) }
            return Prepared(kind: .retention, key: [], reason: 0, timestamp: 0, maxAge: 0, payloadLength: 0, body: [],
                            metadata: try encodeMetadata(RetentionRecord.metadata(policy, by: by)), recordVersion: newestRecordVersion)
        }
    }

    /// The metadata block: u16 length of what follows, then per name, sorted by bytes, u8 name
    /// length, name, u16 value length, value. Empty when there is no metadata.
    static func encodeMetadata(_ metadata: [String: String]) throws -> [UInt8] {
        guard !metadata.isEmpty else { return [] }
        var block = ByteWriter()
        for (name, value) in metadata.map({ (Array($0.key.utf8), Array($0.value.utf8)) }).sorted(by: { $0.0.lexicographicallyPrecedes($1.0) }) {
            guard let nameLength = UInt8(exactly: name.count), nameLength > 0, let valueLength = UInt16(exactly: value.count) else {
                throw CacheLogError.invalidMetadata(detail: "a name must be 1 to 255 bytes and a value at most 65535 bytes")
            }
            block.u8(nameLength)
            block.append(name)
            block.u16(valueLength)
            block.append(value)
        }
        guard let length = UInt16(exactly: block.bytes.count) else {
            throw CacheLogError.invalidMetadata(detail: "\(block.bytes.count) bytes in all, over 65535")
        }
        var framed = ByteWriter(capacity: 2 + block.bytes.count)
        framed.u16(length)
        framed.append(block.bytes)
        return framed.bytes
    }

    /// The names and values of a metadata block (`block` without its u16 length), or `nil` when
    /// the block does not parse.
    static func decodeMetadata(_ block: UnsafeRawBufferPointer) -> [String: String]? {
        var reader = ByteReader(block)
        var metadata: [String: String] = [:]
        while reader.remaining > 0 {
            guard let nameLength = reader.u8(), nameLength > 0, let name = reader.bytes(Int(nameLength)),
                  let valueLength = reader.u16(), let value = reader.bytes(Int(valueLength))
            else { return nil }
            metadata[String(decoding: name, as: UTF8.self)] = String(decoding: value, as: UTF8.self)
        }
        return metadata
    }

    /// Frames `event`. With `payloadAt`, the body is a reference to the put at that seq, which
    /// holds a byte-identical payload, instead of a second copy of it.
    static func encode(_ event: Prepared, recordedAt: Double, payloadAt reference: UInt64? = nil) -> [UInt8] {
        let body = reference.map(SeqKey.bytes) ?? event.body
        var writer = ByteWriter(capacity: headerSize + event.key.count + body.count + event.metadata.count + checksumSize)
        var flags: UInt8 = reference != nil ? referenceFlag : event.kind == .put ? compressedFlag : 0
        if event.recordsMaxAge { flags |= maxAgeFlag }
        if !event.metadata.isEmpty { flags |= metadataFlag }
        writer.u8(event.recordVersion)
        writer.u8(event.kind.rawValue)
        writer.u8(flags)
        writer.u8(event.reason)
        writer.f64(recordedAt)
        writer.f64(event.timestamp)
        writer.f64(event.maxAge)
        writer.u16(UInt16(event.key.count))
        writer.u32(event.payloadLength)
        writer.u32(UInt32(body.count))
        writer.append(event.key)
        writer.append(body)
        writer.append(event.metadata)
        let crc = writer.bytes.withUnsafeBytes { Zlib.crc32($0) }
        writer.u32(crc)
        return writer.bytes
    }

    /// The fixed header and where the key and body sit. Decoding it checks the framing and, unless
    /// told not to, the checksum; it never inflates.
    struct Header {
        var version: UInt8
        var kind: EventKind
        var flags: UInt8
        var reason: Event.DeletionReason?
        var recordedAt: Double
        var timestamp: Double
        var maxAge: Double
        var payloadLength: Int
        var key: Range<Int>
        var body: Range<Int>
        /// The metadata block after the body, without its u16 length; empty when there is none.
        var metadata: Range<Int>
        var storedBytes: Int

        var isReference: Bool { flags & EventCodec.referenceFlag != 0 }
        /// The max age a put was saved under, when it recorded one.
        var recordedMaxAge: Double? { kind == .put && flags & EventCodec.maxAgeFlag != 0 ? maxAge : nil }
    }

    /// The seq of the record that holds this put's payload bytes: its own, or the one it references.
    static func payloadSeq(_ header: Header, in record: UnsafeRawBufferPointer, seq: UInt64) throws -> UInt64 {
        guard header.isReference else { return seq }
        guard let target = SeqKey.decode(UnsafeRawBufferPointer(rebasing: record[header.body])), target < seq else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "payload reference is not an earlier seq")
        }
        return target
    }

    /// The recordedAt field alone (bytes 4..<12), without checking the rest of the record.
    static func recordedAt(_ record: UnsafeRawBufferPointer) -> Double? {
        guard record.count >= 12 else { return nil }
        return Double(bitPattern: UInt64(bigEndian: record.loadUnaligned(fromByteOffset: 4, as: UInt64.self)))
    }

    static func decodeHeader(_ record: UnsafeRawBufferPointer, seq: UInt64, verifyChecksum: Bool = true) throws -> Header {
        func corrupt(_ detail: String) -> CacheLogError { .corruptRecord(seq: seq, detail: detail) }
        var reader = ByteReader(record)
        guard record.count >= headerSize + checksumSize,
              let version = reader.u8(), let kindByte = reader.u8(), let flags = reader.u8(), let reasonByte = reader.u8(),
              let recordedAt = reader.f64(), let timestamp = reader.f64(), let maxAge = reader.f64(),
              let keyLength = reader.u16(), let payloadLength = reader.u32(), let bodyLength = reader.u32()
        else { throw corrupt("record is \(record.count) bytes, shorter than a header") }
        let bodyEnd = headerSize + Int(keyLength) + Int(bodyLength)
        var metadataLength = 0
        if flags & metadataFlag != 0 {
            guard record.count >= bodyEnd + 2 + checksumSize else { throw corrupt("record is \(record.count) bytes, too short for its metadata") }
            metadataLength = 2 + Int(UInt16(bigEndian: record.loadUnaligned(fromByteOffset: bodyEnd, as: UInt16.self)))
        }
        guard bodyEnd + metadataLength + checksumSize == record.count else {
            throw corrupt("framing says \(bodyEnd + metadataLength + checksumSize) bytes, record has \(record.count)")
        }
        if verifyChecksum {
            let stored = UInt32(bigEndian: record.loadUnaligned(fromByteOffset: record.count - checksumSize, as: UInt32.self))
            let computed = Zlib.crc32(UnsafeRawBufferPointer(rebasing: record[0..<(record.count - checksumSize)]))
            guard stored == computed else { throw corrupt("checksum mismatch") }
        }
        guard (formatVersion...newestRecordVersion).contains(version) else {
            throw corrupt("unsupported record format version \(version); this build of CacheLog reads versions 1 to \(newestRecordVersion)")
        }
        guard let kind = EventKind(rawValue: kindByte), kind != .retention || version >= 2 else { throw corrupt("unknown event kind \(kindByte)") }
        var reason: Event.DeletionReason?
        if kind == .delete {
            guard let known = Event.DeletionReason(rawValue: reasonByte), known != .evicted || version >= 2 else {
                throw corrupt("unknown delete reason \(reasonByte)")
            }
            reason = known
        }
        let keyStart = headerSize
        let bodyStart = keyStart + Int(keyLength)
        // Keys are UTF-8 (every key is appended from a String): bytes that are not are damage, and
        // a fold that took them as a key would make a cache no one can name, not even to delete it.
        guard isUTF8(UnsafeRawBufferPointer(rebasing: record[keyStart..<bodyStart])) else { throw corrupt("key is not UTF-8") }
        return Header(
            version: version, kind: kind, flags: flags, reason: reason, recordedAt: recordedAt,
            timestamp: timestamp, maxAge: maxAge, payloadLength: Int(payloadLength),
            key: keyStart..<bodyStart, body: bodyStart..<bodyEnd,
            metadata: (bodyEnd + min(metadataLength, 2))..<(bodyEnd + metadataLength), storedBytes: record.count)
    }

    /// Whether `bytes` are valid UTF-8; ASCII, the common case, costs one pass over the bytes.
    static func isUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if bytes.allSatisfy({ $0 < 0x80 }) { return true }
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// Whether two byte ranges hold the same bytes (one `memcmp`, not a loop over elements).
    static func sameBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard let p = a.baseAddress, let q = b.baseAddress else { return true }
        return memcmp(p, q, a.count) == 0
    }

    static func key(_ header: Header, in record: UnsafeRawBufferPointer) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: record[header.key]), as: UTF8.self)
    }

    static func keyBytes(_ header: Header, in record: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: record[header.key])
    }

    /// Inflates the payload of a `put`. A body that does not inflate to exactly the recorded length
    /// is corruption, reported with the sequence number.
    static func payload(_ header: Header, in record: UnsafeRawBufferPointer, seq: UInt64) throws -> Data {
        guard !header.isReference else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "payload reference where the payload was expected")
        }
        let body = UnsafeRawBufferPointer(rebasing: record[header.body])
        guard header.flags & compressedFlag != 0 else {
            guard body.count == header.payloadLength else {
                throw CacheLogError.corruptRecord(seq: seq, detail: "body is \(body.count) bytes, payload length says \(header.payloadLength)")
            }
            return Data(body)
        }
        guard let payload = Zlib.decompress(body, expectedSize: header.payloadLength) else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "body does not inflate to \(header.payloadLength) bytes")
        }
        return payload
    }

    /// The metadata a put was saved with; empty when it has none.
    static func metadata(_ header: Header, in record: UnsafeRawBufferPointer, seq: UInt64) throws -> [String: String] {
        guard !header.metadata.isEmpty else { return [:] }
        guard let metadata = decodeMetadata(UnsafeRawBufferPointer(rebasing: record[header.metadata])) else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "metadata does not parse")
        }
        return metadata
    }

    /// - Parameter payload: delivers the payload of a put (following a reference when there is one).
    static func recordedEvent(_ header: Header, in record: UnsafeRawBufferPointer, seq: UInt64, payload: (() throws -> Data)?) throws -> RecordedEvent {
        RecordedEvent(
            seq: seq,
            recordedAt: Date(storedSeconds: header.recordedAt),
            formatVersion: header.version,
            kind: header.kind,
            key: key(header, in: record),
            timestamp: header.kind == .delete || header.kind == .retention ? nil : Date(storedSeconds: header.timestamp),
            maxAge: header.kind == .expire ? header.maxAge : header.recordedMaxAge,
            metadata: try metadata(header, in: record, seq: seq),
            reason: header.reason,
            payloadBytes: header.payloadLength,
            storedBytes: header.storedBytes,
            payload: header.kind == .put ? try payload?() : nil)
    }
}
