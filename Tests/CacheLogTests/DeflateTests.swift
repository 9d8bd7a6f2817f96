import CZlib
import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

/// Issue 31: the payloads are compressed with libdeflate, in the zlib format the log always had:
/// what the engine writes now inflates with the system zlib (as every earlier release and any
/// outside reader inflates it), and what zlib wrote (every record of an earlier release) reads back.
@Suite("Deflate: libdeflate writing and reading zlib streams", .hangGuard)
struct DeflateTests {
    static func payloads() -> [Data] {
        var generator = SeededGenerator(seed: 41)
        return [Data(), Data("{}".utf8), FilmFeed(count: 100, using: &generator).payload, Data(generator.bytes(70_000))]
    }

    @Test(arguments: payloads(), [Int32(1), 6, 9])
    func whatTheEngineCompresses_inflatesWithTheSystemZlib(payload: Data, level: Int32) throws {
        let stream = try payload.withUnsafeBytes { try Zlib.compress($0, level: level) }
        var length = uLongf(max(payload.count, 1))
        var output = [UInt8](repeating: 0, count: Int(length))
        let code = stream.withUnsafeBufferPointer { input in
            uncompress(&output, &length, input.baseAddress, uLong(input.count))
        }
        #expect(code == Z_OK)
        #expect(Data(output.prefix(Int(length))) == payload)
    }

    @Test(arguments: payloads(), [Int32(1), 6, 9])
    func whatTheSystemZlibCompressed_readsBack_andNothingElse(payload: Data, level: Int32) throws {
        var length = compressBound(uLong(payload.count))
        var stream = [UInt8](repeating: 0, count: Int(length))
        // zlib wants an input address even for no bytes.
        let bytes = Array(payload) + [0]
        let code = compress2(&stream, &length, bytes, uLong(payload.count), level)
        #expect(code == Z_OK)
        stream.removeSubrange(Int(length)...)
        #expect(stream.withUnsafeBytes { Zlib.decompress($0, expectedSize: payload.count) } == payload)
        // Another length, a byte more or less of the stream, or a flipped byte: refused.
        #expect(stream.withUnsafeBytes { Zlib.decompress($0, expectedSize: payload.count + 1) } == nil)
        #expect((stream + [0]).withUnsafeBytes { Zlib.decompress($0, expectedSize: payload.count) } == nil)
        #expect(stream.dropLast().withUnsafeBytes { Zlib.decompress($0, expectedSize: payload.count) } == nil)
        var flipped = stream
        flipped[flipped.count - 1] ^= 0x01 // the adler-32 of the payload
        #expect(flipped.withUnsafeBytes { Zlib.decompress($0, expectedSize: payload.count) } == nil)
    }
}
