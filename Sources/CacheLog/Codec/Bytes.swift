import Foundation

/// Appends big-endian integers and IEEE 754 doubles: every number on disk is big-endian, so that
/// keys sort by value in LMDB and readers in other languages need only `struct.unpack('>…')`.
struct ByteWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
    mutating func f64(_ value: Double) { u64(value.bitPattern) }
    mutating func append<C: Collection>(_ other: C) where C.Element == UInt8 { bytes.append(contentsOf: other) }
}

/// Reads what `ByteWriter` wrote, with bounds checks: a short buffer is a `nil`, never a trap.
struct ByteReader {
    let buffer: UnsafeRawBufferPointer
    var offset: Int = 0

    init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    var remaining: Int { buffer.count - offset }

    mutating func u8() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { offset += 1 }
        return buffer[offset]
    }

    mutating func u16() -> UInt16? { read(UInt16.self) }
    mutating func u32() -> UInt32? { read(UInt32.self) }
    mutating func u64() -> UInt64? { read(UInt64.self) }
    mutating func f64() -> Double? { u64().map(Double.init(bitPattern:)) }

    mutating func bytes(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, remaining >= count else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
    }

    private mutating func read<T: FixedWidthInteger>(_: T.Type) -> T? {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { return nil }
        defer { offset += size }
        return T(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

/// Sequence numbers as LMDB keys: 8 bytes big-endian, so byte order is numeric order and
/// an append (``PutOptions/append``) can check that every new key sorts last.
enum SeqKey {
    static func bytes(_ seq: UInt64) -> [UInt8] {
        withUnsafeBytes(of: seq.bigEndian) { Array($0) }
    }

    static func decode(_ raw: UnsafeRawBufferPointer) -> UInt64? {
        guard raw.count == 8 else { return nil }
        return UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))
    }
}

extension Date {
    /// Dates are stored as seconds since 1970 in a double: exact round trip of any `Date`.
    var storedSeconds: Double { timeIntervalSince1970 }
    init(storedSeconds: Double) { self.init(timeIntervalSince1970: storedSeconds) }
}
