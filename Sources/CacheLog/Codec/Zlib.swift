internal import CZlib
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// zlib-format (RFC 1950) compression (libdeflate: ``Deflate``) and CRC-32 (the system zlib).
enum Zlib {
    /// The engine's level: the fastest. Measured on the five apps' payloads (Tools/Benchmarks,
    /// `--only zlib`), it compresses in about a quarter of level 6's time (the 45 KB film feed: 0.09
    /// ms against 0.41 ms with libdeflate) for a record about 5 % larger.
    static let defaultLevel: Int32 = 1

    static func compress(_ source: UnsafeRawBufferPointer, level: Int32 = defaultLevel) throws -> [UInt8] {
        try Deflate.compress(source, level: level)
    }

    /// Deflate expands at most 1032:1 (a 258-byte match coded in 2 bits), so no zlib stream of
    /// n bytes inflates to more than n * 1032.
    static let maximumExpansion = 1032

    /// Inflates `source`, which must decompress to exactly `expectedSize` bytes and be consumed whole.
    /// Returns nil on any failure: the caller knows which record it was reading and reports it.
    ///
    /// `expectedSize` comes from the record, so it is checked against what `source` could possibly
    /// inflate to before anything is allocated: a damaged or hostile length (up to 4 GiB) is refused
    /// instead of becoming an allocation of that size.
    static func decompress(_ source: UnsafeRawBufferPointer, expectedSize: Int) -> Data? {
        guard source.baseAddress != nil, expectedSize >= 0,
              expectedSize <= source.count * maximumExpansion
        else { return nil }
        if expectedSize == 0 {
            // The empty payload's stream (header, one empty block, adler32 of nothing) inflates
            // into no room at all.
            var none: UInt8 = 0
            let inflated = withUnsafeMutableBytes(of: &none) { Deflate.decompress(source, into: UnsafeMutableRawBufferPointer(start: $0.baseAddress, count: 0)) }
            return inflated ? Data() : nil
        }
        var output = Data(count: expectedSize)
        let inflated = output.withUnsafeMutableBytes { Deflate.decompress(source, into: $0) }
        return inflated ? output : nil
    }

    static func crc32(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = buffer.baseAddress else { return 0 }
        // crc32_z takes a size_t: records are not limited to 4 GiB by the CRC's own length argument.
        return UInt32(CZlib.crc32_z(0, base.assumingMemoryBound(to: Bytef.self), z_size_t(buffer.count)))
    }
}
