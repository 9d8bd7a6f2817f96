import CZlib
import Foundation

/// Bodies encoded as a server sends them with `Content-Encoding`, made with the system's zlib:
/// `deflate` (zlib's format), `gzip`, and the broken forms a test needs.
public enum Compressed {
    /// `data` in zlib's format (`Content-Encoding: deflate`), at zlib's best compression.
    public static func deflate(_ data: Data) -> Data {
        var length = compressBound(uLong(data.count))
        var output = [UInt8](repeating: 0, count: Int(length))
        let result = data.withUnsafeBytes { input in
            compress2(&output, &length, input.bindMemory(to: Bytef.self).baseAddress, uLong(data.count), Z_BEST_COMPRESSION)
        }
        // A test compares what it gets: an empty body fails it with a clear difference.
        guard result == Z_OK else { return Data() }
        return Data(output.prefix(Int(length)))
    }

    /// `data` as one gzip member (RFC 1952): a header, the raw deflate stream and the trailer
    /// (CRC-32 and length, little-endian).
    public static func gzip(_ data: Data) -> Data {
        let zlib = deflate(data)
        // A zlib stream is 2 bytes of header, the raw deflate stream, and 4 bytes of Adler-32.
        let raw = zlib.dropFirst(2).dropLast(4)
        let crc = data.withUnsafeBytes { UInt32(crc32(0, $0.bindMemory(to: Bytef.self).baseAddress, uInt(data.count))) }
        return Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]) + raw + littleEndian(crc) + littleEndian(UInt32(truncatingIfNeeded: data.count))
    }

    /// `gzip(data)` without its 8-byte trailer: what a download cut short at the end sends.
    public static func gzipWithoutTrailer(_ data: Data) -> Data {
        Data(gzip(data).dropLast(8))
    }

    /// `data` as raw deflate, without zlib's header and checksum, as some servers send
    /// `Content-Encoding: deflate`.
    public static func rawDeflate(_ data: Data) -> Data {
        Data(deflate(data).dropFirst(2).dropLast(4))
    }

    private static func littleEndian(_ value: UInt32) -> Data {
        withUnsafeBytes(of: value.littleEndian) { Data($0) }
    }
}
