internal import CZlib
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// zlib-format (RFC 1950) compression and CRC-32, straight from the system zlib.
enum Zlib {
    /// The engine's level: zlib's fastest. Measured on the five apps' payloads (Tools/Benchmarks),
    /// it compresses in about a fifth of level 6's time (a 45 KB film feed: 0.2 ms against 1 ms)
    /// and stores 2.2 to 5.6 times smaller than the JSON, where 6 stores 2.3 to 6.3 times smaller.
    static let defaultLevel: Int32 = 1

    static func compress(_ source: UnsafeRawBufferPointer, level: Int32 = defaultLevel) throws -> [UInt8] {
        if source.count <= DeflateStreams.maximumInput { return try DeflateStreams.compress(source, level: level) }
        var capacity = compressBound(uLong(source.count))
        var output = [UInt8](repeating: 0, count: Int(capacity))
        let code = output.withUnsafeMutableBytes { out -> Int32 in
            guard let destination = out.bindMemory(to: Bytef.self).baseAddress else { return Z_BUF_ERROR }
            // zlib wants a non-null input pointer even for an empty input.
            let input = source.baseAddress ?? UnsafeRawPointer(destination)
            return compress2(destination, &capacity, input.assumingMemoryBound(to: Bytef.self), uLong(source.count), level)
        }
        guard code == Z_OK else { throw CacheLogError.compressionFailed(code: CompressionErrorCode(rawValue: code)) }
        output.removeSubrange(Int(capacity)...)
        return output
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
        guard let input = source.baseAddress, expectedSize >= 0,
              expectedSize <= source.count * maximumExpansion
        else { return nil }
        // uncompress needs room for one byte even when the payload is empty.
        var output = Data(count: max(expectedSize, 1))
        var length = uLongf(output.count)
        var consumed = uLong(source.count)
        let code = output.withUnsafeMutableBytes { out -> Int32 in
            guard let destination = out.bindMemory(to: Bytef.self).baseAddress else { return Z_BUF_ERROR }
            return uncompress2(destination, &length, input.assumingMemoryBound(to: Bytef.self), &consumed)
        }
        guard code == Z_OK, Int(length) == expectedSize, Int(consumed) == source.count else { return nil }
        if expectedSize == 0 { return Data() }
        return output
    }

    static func crc32(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = buffer.baseAddress else { return 0 }
        // crc32_z takes a size_t: records are not limited to 4 GiB by the CRC's own length argument.
        return UInt32(CZlib.crc32_z(0, base.assumingMemoryBound(to: Bytef.self), z_size_t(buffer.count)))
    }
}
