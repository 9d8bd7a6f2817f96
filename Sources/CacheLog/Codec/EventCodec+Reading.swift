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

/// Reading a stored record: its header, checked, and what it holds, read without inflating
/// what the caller does not ask for.
extension EventCodec {
    /// The fixed header and where the key and body sit. Decoding it checks the framing and, unless
    /// told not to, the checksum; it never inflates.
    struct Header {
        var version: UInt8
        var kind: EventKind
        var flags: UInt8
        var reason: Event.DeletionReason?
        /// ``Foundation/Date/stamp``s, whatever the record's version stored.
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
        /// Compressed bytes per payload byte of a whole put's body.
        var compression: Double { payloadLength > 0 ? Double(body.count) / Double(payloadLength) : 1 }
        var isDelta: Bool { flags & EventCodec.deltaFlag != 0 }
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

    /// The seq of the record a put depends on for its payload: the put it references, or the
    /// base of its delta; nil for a put that holds its whole payload, and for other kinds.
    static func payloadSource(_ header: Header, in record: UnsafeRawBufferPointer, seq: UInt64) throws -> UInt64? {
        if header.isReference { return try payloadSeq(header, in: record, seq: seq) }
        if header.isDelta { return try delta(header, in: record, seq: seq).base }
        return nil
    }

    /// A delta body's fields; `instructions` is the zlib stream that inflates to `instructionLength` bytes.
    struct DeltaBody {
        var base: UInt64
        var depth: Int
        var instructionLength: Int
        var instructions: UnsafeRawBufferPointer
    }

    /// The fields of a delta put's body, checked to name an earlier seq at a depth of 1 or more.
    static func delta(_ header: Header, in record: UnsafeRawBufferPointer, seq: UInt64) throws -> DeltaBody {
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: record[header.body]))
        guard header.isDelta, let base = reader.u64(), let depth = reader.u8(), let length = reader.u32(),
              let stream = reader.bytes(reader.remaining)
        else { throw CacheLogError.corruptRecord(seq: seq, detail: "delta body is \(header.body.count) bytes, shorter than its fixed part") }
        guard base > 0, base < seq else { throw CacheLogError.corruptRecord(seq: seq, detail: "delta base \(base) is not an earlier seq") }
        guard depth > 0 else { throw CacheLogError.corruptRecord(seq: seq, detail: "delta at chain depth 0") }
        return DeltaBody(base: base, depth: Int(depth), instructionLength: Int(length), instructions: stream)
    }

    /// The chain depth of a put that holds its payload: 0 for a whole one, the depth in its body for a delta.
    static func depth(_ header: Header, in record: UnsafeRawBufferPointer, seq: UInt64) throws -> Int {
        header.isDelta ? try delta(header, in: record, seq: seq).depth : 0
    }

    /// The payload of delta put `seq`, from its base's payload: inflates the instructions and
    /// applies them. Any failure is corruption of this record.
    static func applyDelta(_ header: Header, in record: UnsafeRawBufferPointer, seq: UInt64, to base: Data) throws -> Data {
        let delta = try delta(header, in: record, seq: seq)
        guard let instructions = Zlib.decompress(delta.instructions, expectedSize: delta.instructionLength) else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "delta instructions do not inflate to \(delta.instructionLength) bytes")
        }
        let applied = instructions.withUnsafeBytes { instructions in
            base.withUnsafeBytes { base in
                Result { () throws(Delta.Damage) in try Delta.apply(instructions, to: base, length: header.payloadLength) }
            }
        }
        return try applied.mapError { CacheLogError.corruptRecord(seq: seq, detail: $0.detail) }.get()
    }

    /// Checks delta put `seq`'s instructions against the length of its base's payload, without
    /// the base's bytes: what `verify` asks of each record, so that a long log costs one pass
    /// and not one rebuild of every chain.
    static func checkDelta(_ header: Header, in record: UnsafeRawBufferPointer, seq: UInt64, baseLength: Int) throws {
        let delta = try delta(header, in: record, seq: seq)
        guard let instructions = Zlib.decompress(delta.instructions, expectedSize: delta.instructionLength) else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "delta instructions do not inflate to \(delta.instructionLength) bytes")
        }
        let checked = instructions.withUnsafeBytes { instructions in
            Result { () throws(Delta.Damage) in try Delta.check(instructions, baseLength: baseLength, length: header.payloadLength) }
        }
        try checked.mapError { CacheLogError.corruptRecord(seq: seq, detail: $0.detail) }.get()
    }

    /// The CRC-32 a record ends with, as stored (not computed).
    static func storedChecksum(_ record: UnsafeRawBufferPointer) -> UInt32? {
        guard record.count >= checksumSize else { return nil }
        return UInt32(bigEndian: record.loadUnaligned(fromByteOffset: record.count - checksumSize, as: UInt32.self))
    }

    /// The recordedAt field alone (bytes 4..<12) as a stamp, read by the version byte, without
    /// checking the rest of the record; nil for a version this build does not know.
    static func recordedAt(_ record: UnsafeRawBufferPointer) -> Double? {
        guard record.count >= 12 else { return nil }
        let stored = Double(bitPattern: UInt64(bigEndian: record.loadUnaligned(fromByteOffset: 4, as: UInt64.self)))
        switch record[0] {
        case recordVersion: return stored
        case plainVersion, deltaVersion: return LegacyStamp.stamp(since1970: stored)
        default: return nil
        }
    }

    /// Whether `record` at `seq` passes its checksum (its header decodes, checksum checked).
    static func passesChecksum(_ record: UnsafeRawBufferPointer, seq: UInt64) -> Bool {
        (try? decodeHeader(record, seq: seq, verifyChecksum: true)) != nil
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
        guard (plainVersion...recordVersion).contains(version) else {
            throw corrupt("unsupported record format version \(version); this build of CacheLog reads versions 1 to 3")
        }
        guard let kind = EventKind(rawValue: kindByte) else { throw corrupt("unknown event kind \(kindByte)") }
        var reason: Event.DeletionReason?
        if kind == .delete {
            guard let known = Event.DeletionReason(rawValue: reasonByte) else { throw corrupt("unknown delete reason \(reasonByte)") }
            reason = known
        }
        // Before version 3, version 2 was for what version 1 lacks, and only that: a delta put, a
        // retention record, an eviction. Either without the other is damage.
        let needsVersion2 = flags & deltaFlag != 0 || kind == .retention || reason == .evicted
        guard version == recordVersion || (version == deltaVersion) == needsVersion2 else {
            throw corrupt("record format version \(version) for a \(needsVersion2 ? "record that needs version 2" : "record of version 1")")
        }
        if flags & deltaFlag != 0 {
            guard kind == .put, flags & (compressedFlag | referenceFlag) == 0 else { throw corrupt("delta flag on a record that cannot hold a delta") }
        }
        let keyStart = headerSize
        let bodyStart = keyStart + Int(keyLength)
        // Keys are UTF-8 (every key is appended from a String): bytes that are not are damage, and
        // a fold that took them as a key would make a cache no one can name, not even to delete it.
        guard isUTF8(UnsafeRawBufferPointer(rebasing: record[keyStart..<bodyStart])) else { throw corrupt("key is not UTF-8") }
        // Seconds since 1970 before version 3: read as the dates they always read as.
        let since1970 = version < recordVersion
        return Header(
            version: version, kind: kind, flags: flags, reason: reason,
            recordedAt: since1970 ? LegacyStamp.stamp(since1970: recordedAt) : recordedAt,
            timestamp: since1970 ? LegacyStamp.stamp(since1970: timestamp) : timestamp, maxAge: maxAge, payloadLength: Int(payloadLength),
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
        guard !header.isReference, !header.isDelta else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "payload \(header.isDelta ? "delta" : "reference") where the payload was expected")
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
            recordedAt: Date(stamp: header.recordedAt),
            formatVersion: header.version,
            kind: header.kind,
            key: key(header, in: record),
            timestamp: header.kind == .delete || header.kind == .retention ? nil : Date(stamp: header.timestamp),
            maxAge: header.kind == .expire ? header.maxAge : header.recordedMaxAge,
            metadata: try metadata(header, in: record, seq: seq),
            reason: header.reason,
            payloadBytes: header.payloadLength,
            storedBytes: header.storedBytes,
            payload: header.kind == .put ? try payload?() : nil,
            storage: storage(header, in: record, seq: seq))
    }

    /// How a put holds its payload; nil for other kinds, and for a body that does not say.
    static func storage(_ header: Header, in record: UnsafeRawBufferPointer, seq: UInt64) -> PayloadStorage? {
        guard header.kind == .put else { return nil }
        if header.isReference { return (try? payloadSeq(header, in: record, seq: seq)).map { .reference(seq: $0) } }
        if header.isDelta { return (try? delta(header, in: record, seq: seq)).map { .delta(base: $0.base) } }
        return .whole
    }
}
