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
///     0      1    record format version: 3, whose dates are seconds since 2001 (``Foundation/Date/stamp``),
///                 so that a reader that predates it refuses it by its version instead of misreading
///                 it; versions 1 and 2 (written before format 4) hold seconds since 1970, and 2 only
///                 for what 1 lacks (a delta put; kind 4 retention; delete reason 4 evicted)
///     1      1    kind: 1 put, 2 delete, 3 expire, 4 retention (version 2 or 3)
///     2      1    flags: bit 0 set when the body is zlib-compressed; bit 1 set when the body is
///                 a reference: the u64 seq of an earlier put of the same key whose payload is identical;
///                 bit 2 set when a put records its max age; bit 3 set when metadata follows the body;
///                 bit 4 (version 2 or 3) set when the body is a delta against an earlier put of the key
///     3      1    delete reason: 1 replaced, 2 explicit, 3 retrieval-error, 4 evicted (version 2 or 3);
///                 0 otherwise
///     4      8    recordedAt: f64 seconds since 2001 (since 1970 in versions 1 and 2)
///     12     8    timestamp: f64 seconds since 2001, as recordedAt (put, expire; 0 for delete)
///     20     8    maxAge: f64 seconds (expire; put with flag bit 2; 0 otherwise)
///     28     2    key length K (u16)
///     30     4    payload length P, uncompressed (u32)
///     34     4    body length B, as stored (u32)
///     38     K    key, UTF-8
///     38+K   B    body: zlib stream of the payload (put), an 8-byte reference, or a delta
///                 (u64 base seq, u8 chain depth, u32 instruction length, zlib stream of ``Delta``
///                 instructions); empty otherwise
///     38+K+B M    metadata, only with flag bit 3: u16 length, then per name (sorted by bytes)
///                 u8 name length, name, u16 value length, value (UTF-8); M counts the u16 too
///     38+K+B+M 4  CRC-32 (zlib's crc32) of every byte before it
///
/// Everything the state needs sits in the fixed header and the key, so a fold never inflates.
enum EventCodec {
    /// The version of every record this build writes: its dates are ``Foundation/Date/stamp``s,
    /// which read back `==`. A build that predates it refuses it by this byte ("unsupported record
    /// format version 3") instead of misreading its dates.
    static let recordVersion: UInt8 = 3
    /// Versions written before format 4, whose dates are seconds since 1970: 1, or 2 for a record
    /// that uses what version 1 lacks (a delta put, a retention record, an eviction).
    static let plainVersion: UInt8 = 1
    static let deltaVersion: UInt8 = 2
    static let headerSize = 38
    static let checksumSize = 4
    static let compressedFlag: UInt8 = 1
    static let referenceFlag: UInt8 = 2
    static let maxAgeFlag: UInt8 = 4
    static let metadataFlag: UInt8 = 8
    static let deltaFlag: UInt8 = 16
    /// A delta body's fixed part: u64 base seq, u8 chain depth, u32 instruction length.
    static let deltaPrefixSize = 13

    /// The deepest delta chain the engine writes: a put whose base is already this deep stores
    /// its whole payload instead, which starts a new chain, so reading any put's payload reads
    /// at most this many deltas and one whole record (and the put itself, when it is a
    /// reference). Measured on a 100-film feed (45 KB) with 2 films changed per refresh, a year
    /// of two-hourly refreshes compacted daily to 30 days (release build): the whole copy's
    /// share of a refresh falls as 1/(N+1) and a read grows by about 5 µs per delta (66 µs for
    /// a whole put). N = 4, 6, 8, 12, 16 stored 3.2, 2.4, 1.9, 1.4, 1.2 KB of records per
    /// refresh and left data.mdb at 1.8, 1.5, 1.3, 1.1, 1.0 MB (whole copies: 14.4 KB, 6.9 MB),
    /// with the deepest read at 87, 98, 108, 128, 148 µs. 8 is under half the 2.5 MB the year
    /// may take, with reads of the deepest version at 1.6 times a whole put's.
    static let maxDeltaDepth = 8

    /// How a put's body holds its payload.
    enum Form: Equatable {
        /// The payload, zlib-compressed.
        case whole
        /// The u64 seq of an earlier put of the key whose payload is byte-identical.
        case reference(UInt64)
        /// ``Prepared/delta``'s body: instructions against an earlier put of the key.
        case delta
    }

    /// A delta of a put's payload against an earlier put of its key, made on the appending task;
    /// the writer uses it only if the base is still the record it was made from.
    struct PreparedDelta: Sendable {
        /// The base put: its seq, the CRC-32 its record ends with, and its payload length.
        var base: UInt64
        var baseChecksum: UInt32
        var baseLength: Int
        /// The new put's chain depth: the base's plus one.
        var depth: Int
        /// The whole body: u64 base seq, u8 depth, u32 instruction length, zlib stream.
        var body: [UInt8]
    }

    /// The put whose payload the appending task found byte-identical to this one's: its seq and
    /// the CRC-32 its record ends with.
    struct IdenticalPayload: Sendable, Equatable {
        var seq: UInt64
        var checksum: UInt32
    }

    /// An event validated and compressed before it reaches the writer, so that compression runs on
    /// the appending task and the single writer only frames and stores.
    struct Prepared: Sendable {
        var kind: EventKind
        var key: [UInt8]
        var reason: UInt8
        /// A put's cache timestamp, or the one an expire judged, as a ``Foundation/Date/stamp``.
        var timestamp: Double
        var maxAge: Double
        var payloadLength: UInt32
        var body: [UInt8]
        /// Flag bit 2 when a put records its max age.
        var recordsMaxAge = false
        /// The metadata block, length prefix included; empty when there is none.
        var metadata: [UInt8] = []
        /// A put's payload, kept while its compression is put off (``compressBody()``): a put
        /// that will be stored as a delta needs no whole body, unless its base is gone by the
        /// time the writer stores it.
        var uncompressed: Data?
        /// The zlib level the payload is compressed at.
        var level: Int32 = Zlib.defaultLevel
        /// A put's payload as a delta against an earlier version, when that is much smaller.
        var delta: PreparedDelta?
        /// A put whose payload equals that of the version it replaces, as the appending task read it.
        var identical: IdenticalPayload?

        /// Compresses the payload into the whole body, if that was put off.
        mutating func compressBody() throws {
            guard let payload = uncompressed else { return }
            body = try EventCodec.wholeBody(payload, key: key, level: level)
            uncompressed = nil
        }
    }

    /// The payload as a zlib stream, refused when the record that frames it could not fit its u32 lengths.
    static func wholeBody(_ payload: Data, key: [UInt8], level: Int32) throws -> [UInt8] {
        let body = try payload.withUnsafeBytes { try Zlib.compress($0, level: level) }
        // Incompressible data grows a little under zlib; the framed body must still fit its u32.
        guard body.count + key.count + headerSize + checksumSize <= Int(UInt32.max) else {
            throw CacheLogError.payloadTooLarge(length: payload.count)
        }
        return body
    }

    /// Validates `event` and, unless `compressing` is false, compresses a put's payload (false
    /// keeps it in ``Prepared/uncompressed`` for ``Prepared/compressBody()``).
    static func prepare(_ event: Event, maxKeySize: Int, level: Int32 = Zlib.defaultLevel, compressing: Bool = true) throws -> Prepared {
        let key = Array(event.key.utf8)
        // An event about a key has one LMDB can hold.
        if event.kind.isAboutAKey {
            guard !key.isEmpty else { throw CacheLogError.emptyKey }
            guard key.count <= maxKeySize else { throw CacheLogError.keyTooLong(length: key.count, maximum: maxKeySize) }
        }
        switch event {
        case .put(_, let payload, let timestamp, let maxAge, let metadata):
            guard payload.count <= Int(UInt32.max) else { throw CacheLogError.payloadTooLarge(length: payload.count) }
            var prepared = Prepared(kind: .put, key: key, reason: 0, timestamp: timestamp.stamp, maxAge: maxAge ?? 0,
                                    payloadLength: UInt32(payload.count), body: [], recordsMaxAge: maxAge != nil,
                                    metadata: try encodeMetadata(metadata), uncompressed: payload, level: level)
            if compressing { try prepared.compressBody() }
            return prepared
        case .delete(_, let reason):
            return Prepared(kind: .delete, key: key, reason: reason.rawValue, timestamp: 0, maxAge: 0, payloadLength: 0, body: [])
        case .expire(_, let timestamp, let maxAge):
            return Prepared(kind: .expire, key: key, reason: 0, timestamp: timestamp.stamp, maxAge: maxAge,
                            payloadLength: 0, body: [])
        case .retention(let policy, let by):
            if let problem = policy.problem { throw CacheLogError.invalidRetention(detail: problem) }
            return Prepared(kind: .retention, key: [], reason: 0, timestamp: 0, maxAge: 0, payloadLength: 0, body: [],
                            metadata: try encodeMetadata(RetentionRecord.metadata(policy, by: by)))
        }
    }

    /// A delta body: u64 base seq, u8 depth, u32 instruction length, then the instructions that
    /// rebuild `payload` from `base` as a zlib stream.
    /// The instructions are compressed at the log's level: they are mostly the bytes that
    /// changed, a few hundred, and on 2-of-100-film refreshes level 9 made them 1 % smaller than 1.
    /// nil when the delta would insert more than `maxInserted` bytes, or its instructions would
    /// not fit their u32 length.
    static func deltaBody(from base: Data, to payload: Data, baseSeq: UInt64, depth: Int, level: Int32 = Zlib.defaultLevel,
                          maxInserted: Int = .max) throws -> [UInt8]? {
        let made = base.withUnsafeBytes { base in payload.withUnsafeBytes { Delta.instructions(from: base, to: $0, maxInserted: maxInserted) } }
        guard let instructions = made, let length = UInt32(exactly: instructions.count), let depthByte = UInt8(exactly: depth) else { return nil }
        let stream = try instructions.withUnsafeBytes { try Zlib.compress($0, level: level) }
        var body = ByteWriter(capacity: deltaPrefixSize + stream.count)
        body.u64(baseSeq)
        body.u8(depthByte)
        body.u32(length)
        body.append(stream)
        return body.bytes
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

    /// Frames `event`, a put's body in the given form: the compressed payload, a reference to
    /// the put at a seq that holds a byte-identical payload, or the prepared delta.
    static func encode(_ event: Prepared, recordedAt: Double, as form: Form = .whole) -> [UInt8] {
        var body = event.body
        var flags: UInt8 = event.kind == .put ? compressedFlag : 0
        switch form {
        case .whole: break
        case .reference(let seq):
            body = SeqKey.bytes(seq)
            flags = referenceFlag
        case .delta:
            if let delta = event.delta {
                body = delta.body
                flags = deltaFlag
            }
        }
        var writer = ByteWriter(capacity: headerSize + event.key.count + body.count + event.metadata.count + checksumSize)
        if event.recordsMaxAge { flags |= maxAgeFlag }
        if !event.metadata.isEmpty { flags |= metadataFlag }
        writer.u8(recordVersion)
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
}
