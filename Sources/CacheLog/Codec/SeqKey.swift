#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sequence numbers as LMDB keys: 8 bytes big-endian, so byte order is numeric order and
/// an append (``PutOptions/append``) can check that every new key sorts last.
enum SeqKey {
    static let size = 8

    static func bytes(_ seq: UInt64) -> [UInt8] {
        withUnsafeBytes(of: seq.bigEndian) { Array($0) }
    }

    static func decode(_ raw: UnsafeRawBufferPointer) -> UInt64? {
        guard raw.count == 8 else { return nil }
        return UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))
    }
}
