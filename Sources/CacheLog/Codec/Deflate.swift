#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CDeflate
import Locking

/// Whole-buffer compression into zlib streams, and back, with libdeflate: the same format zlib
/// writes and reads (any zlib inflates these records, and these read any zlib's), in about half
/// zlib's time. Measured on the 45 KB film feed at level 1: 124 µs to compress against zlib's 271
/// (on a stream kept for reuse), 41 µs to inflate against 81, and 15,383 bytes against 16,312
/// (Tools/Benchmarks/README.md). The compression was the largest part of a save's CPU time.
///
/// Compressors and decompressors are kept for reuse, a few per level: allocating one sets up its
/// tables (hundreds of KB for a compressor), and malloc hands those pages back to the system when
/// they are freed, so the next call would fault them in again. Each is used by one caller at a
/// time: taken from the pool, given back after.
enum Deflate {
    /// Kept per level: more than the cores that compress at once would only hold memory.
    private static let kept = max(2, ProcessInfo.processInfo.activeProcessorCount)
    private static let idleCompressors = Locked<[Int32: [OpaquePointer]]>([:])
    private static let idleDecompressors = Locked<[OpaquePointer]>([])

    /// The largest payload a delta is tried for (``DeltaDecision/sizes``): a whole body the writer
    /// makes of it, when its base is gone, always fits its record's u32 lengths.
    static let maximumInput = 64 << 20

    /// Compresses `source` whole into a zlib stream at `level` (1 to 12).
    static func compress(_ source: UnsafeRawBufferPointer, level: Int32) throws -> [UInt8] {
        guard let compressor = idleCompressors.withLock({ $0[level]?.popLast() }) ?? libdeflate_alloc_compressor(level) else {
            throw CacheLogError.compressionFailed(code: CompressionErrorCode(rawValue: outOfMemory))
        }
        defer { giveBack(compressor, level: level) }
        let bound = libdeflate_zlib_compress_bound(compressor, source.count)
        var written = 0
        // An empty input may have no address; libdeflate reads none of it then.
        let input = source.baseAddress ?? UnsafeRawPointer(bitPattern: 1)
        let output = [UInt8](unsafeUninitializedCapacity: max(bound, 1)) { buffer, count in
            written = libdeflate_zlib_compress(compressor, input, source.count, buffer.baseAddress, bound)
            count = written
        }
        // 0 means the output did not fit, which the bound rules out.
        guard written > 0 else { throw CacheLogError.compressionFailed(code: CompressionErrorCode(rawValue: bufferTooSmall)) }
        return output
    }

    /// Inflates the zlib stream `source` into `destination`, which it must fill exactly, consuming
    /// `source` whole; false on anything else (damage, or a decompressor that cannot be had).
    static func decompress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Bool {
        guard let input = source.baseAddress, let output = destination.baseAddress,
              let decompressor = idleDecompressors.withLock({ $0.popLast() }) ?? libdeflate_alloc_decompressor()
        else { return false }
        defer {
            if !idleDecompressors.withLock({ keep(decompressor, in: &$0) }) { libdeflate_free_decompressor(decompressor) }
        }
        var consumed = 0, produced = 0
        let result = libdeflate_zlib_decompress_ex(decompressor, input, source.count, output, destination.count, &consumed, &produced)
        return result == LIBDEFLATE_SUCCESS && produced == destination.count && consumed == source.count
    }

    private static func giveBack(_ compressor: OpaquePointer, level: Int32) {
        if !idleCompressors.withLock({ keep(compressor, in: &$0[level, default: []]) }) { libdeflate_free_compressor(compressor) }
    }

    /// Keeps `handle` among `idle` for reuse, unless ``kept`` are there already; whether it did.
    private static func keep(_ handle: OpaquePointer, in idle: inout [OpaquePointer]) -> Bool {
        guard idle.count < kept else { return false }
        idle.append(handle)
        return true
    }

    /// zlib's numbers for the two ways a compression can fail, which ``CompressionErrorCode`` reports.
    private static let outOfMemory: Int32 = -4
    private static let bufferTooSmall: Int32 = -5
}
