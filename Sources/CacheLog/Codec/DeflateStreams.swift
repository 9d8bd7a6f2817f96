internal import CZlib
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking

/// Deflate streams kept for reuse, a few per level. `compress2` sets up and tears down about
/// 270 KB of zlib state per call (the window, the hash chains, the pending buffer); malloc hands
/// those pages back to the system when they are freed, and the next call faults them in again.
/// On a 3.6 KB payload that was most of the time (100 µs, against 16 µs on a kept stream), and
/// half of it on a 45 KB feed. A kept stream costs `deflateReset` (it clears the hash heads).
///
/// A zlib stream keeps a pointer to itself, so each lives at a fixed address (allocated here,
/// never moved) and is used by one caller at a time: taken from the pool, given back after.
enum DeflateStreams {
    /// Streams kept per level: more than the cores that compress at once would only hold memory.
    private static let kept = max(2, ProcessInfo.processInfo.activeProcessorCount)
    private static let idle = Locked<[Int32: [UnsafeMutablePointer<z_stream>]]>([:])

    /// Compresses `source` whole into a zlib stream, at `level`, with a kept stream. `source`
    /// must be at most `maximumInput` bytes (zlib counts input and output in 32 bits).
    static func compress(_ source: UnsafeRawBufferPointer, level: Int32) throws -> [UInt8] {
        let stream = try take(level: level)
        var code = Z_OK
        defer { giveBack(stream, level: level, healthy: code == Z_STREAM_END) }
        let bound = Int(deflateBound(stream, uLong(source.count)))
        let output = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            // zlib reads input through a non-const pointer but never writes it (and reads none
            // when the count is 0, so an empty input may have no address).
            stream.pointee.next_in = source.baseAddress.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self)) }
            stream.pointee.avail_in = uInt(source.count)
            stream.pointee.next_out = buffer.baseAddress
            stream.pointee.avail_out = uInt(bound)
            code = deflate(stream, Z_FINISH)
            count = code == Z_STREAM_END ? Int(stream.pointee.total_out) : 0
        }
        guard code == Z_STREAM_END else {
            throw CacheLogError.compressionFailed(code: CompressionErrorCode(rawValue: code == Z_OK ? Z_BUF_ERROR : code))
        }
        return output
    }

    /// Inputs up to this size go through a kept stream; larger ones, rare, through `compress2`.
    static let maximumInput = 64 << 20

    private static func take(level: Int32) throws -> UnsafeMutablePointer<z_stream> {
        if let stream = idle.withLock({ $0[level]?.popLast() }) {
            guard deflateReset(stream) == Z_OK else {
                release(stream)
                return try take(level: level)
            }
            return stream
        }
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let code = cachelog_deflate_init(stream, level)
        guard code == Z_OK else {
            stream.deallocate()
            throw CacheLogError.compressionFailed(code: CompressionErrorCode(rawValue: code))
        }
        return stream
    }

    private static func giveBack(_ stream: UnsafeMutablePointer<z_stream>, level: Int32, healthy: Bool) {
        let keep = healthy && idle.withLock { streams -> Bool in
            guard streams[level, default: []].count < kept else { return false }
            streams[level, default: []].append(stream)
            return true
        }
        if !keep { release(stream) }
    }

    private static func release(_ stream: UnsafeMutablePointer<z_stream>) {
        deflateEnd(stream)
        stream.deallocate()
    }
}
