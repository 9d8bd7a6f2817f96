internal import CLMDB
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

/// LMDB's messages for its return codes (`mdb_strerror` also knows errno values such as ENOSPC).
enum LMDBMessages {
    static func message(for code: Int32) -> String { String(cString: mdb_strerror(code)) }
}

extension StorageErrorCode {
    /// A put found its key already there (with ``PutOptions/append``: not after the last key).
    static let keyExists = StorageErrorCode(rawValue: MDB_KEYEXIST)
    /// The map is full: grow it and replay the transaction.
    static let mapFull = StorageErrorCode(rawValue: MDB_MAP_FULL)
    /// A short write: LMDB reports the disk running out in the middle of a commit this way.
    static let ioError = StorageErrorCode(rawValue: EIO)
    static let invalidArgument = StorageErrorCode(rawValue: EINVAL)
    static let outOfMemory = StorageErrorCode(rawValue: ENOMEM)

    /// The disk, the user's quota or the process's file-size limit had no room for a write.
    var isNoRoom: Bool { [ENOSPC, EDQUOT, EFBIG].contains(rawValue) }

    /// LMDB found its own structure damaged: a page of the wrong kind, a page past the end, a
    /// tree deeper than any it writes. It keeps no checksums on these pages, so this is all it
    /// can say of the damage.
    var isDamagedStructure: Bool { [MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_CURSOR_FULL].contains(rawValue) }
}

extension CacheLogError {
    /// Wraps an LMDB return code; a code that means "no room" is ``storageFull(operation:code:)``.
    static func lmdb(_ operation: String, _ raw: Int32) -> CacheLogError {
        let code = StorageErrorCode(rawValue: raw)
        return code.isNoRoom ? .storageFull(operation: operation, code: code) : .lmdb(operation: operation, code: code)
    }

    /// True when a put found its key already there (with ``PutOptions/append``: not after the last key).
    var isKeyExists: Bool {
        if case .lmdb(_, let code) = self { return code == .keyExists }
        return false
    }

    /// True for the error that means "the map is full: grow it and replay".
    var isMapFull: Bool {
        if case .lmdb(_, let code) = self { return code == .mapFull }
        return false
    }
}

@inline(__always)
func lmdbCheck(_ code: Int32, _ operation: @autoclosure () -> String) throws {
    guard code == MDB_SUCCESS else { throw CacheLogError.lmdb(operation(), code) }
}
