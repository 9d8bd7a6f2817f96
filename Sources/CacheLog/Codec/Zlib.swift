import CZlib
import Foundation

/// zlib-format (RFC 1950) compression and CRC-32, straight from the system zlib.
enum Zlib {
    /// zlib's default trade-off of speed and size.
    static let defaultLevel: Int32 = 6

    static func compress(_ source: UnsafeRawBufferPointer, level: Int32 = defaultLevel) throws -> [UInt8] {
        var capacity = compressBound(uLong(source.count))
        var output = [UInt8](repeating: 0, count: Int(capacity))
        let code = output.withUnsafeMutableBytes { out -> Int32 in
            guard let destination = out.bindMemory(to: Bytef.self).baseAddress else { return Z_BUF_ERROR }
            // zlib wants a non-null input pointer even for an empty input.
            let input = source.baseAddress ?? UnsafeRawPointer(destination)
            return compress2(destination, &capacity, input.assumingMemoryBound(to: Bytef.self), uLong(source.count), level)
        }
        guard code == Z_OK else { throw CacheLogError.compressionFailed(code: code) }
        output.removeSubrange(Int(capacity)...)
        return output
    }

    /// Inflates `source`, which must decompress to exactly `expectedSize` bytes and be consumed whole.
    /// Returns nil on any failure: the caller knows which record it was reading and reports it.
    static func decompress(_ source: UnsafeRawBufferPointer, expectedSize: Int) -> Data? {
        guard let input = source.baseAddress, expectedSize >= 0 else { return nil }
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
        return UInt32(CZlib.crc32(0, base.assumingMemoryBound(to: Bytef.self), uInt(buffer.count)))
    }
}
