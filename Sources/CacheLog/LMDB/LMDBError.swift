import CLMDB
import Foundation

extension CacheLogError {
    /// Wraps an LMDB return code; `mdb_strerror` also knows errno values such as ENOSPC.
    static func lmdb(_ operation: String, _ code: Int32) -> CacheLogError {
        let message = String(cString: mdb_strerror(code))
        switch code {
        case ENOSPC, EDQUOT, EFBIG:
            return .storageFull(operation: operation, code: code, message: message)
        default:
            return .lmdb(operation: operation, code: code, message: message)
        }
    }

    /// True when a put found its key already there (with MDB_APPEND: not after the last key).
    var isKeyExists: Bool {
        if case .lmdb(_, let code, _) = self { return code == MDB_KEYEXIST }
        return false
    }

    /// True for the error that means "the map is full: grow it and replay".
    var isMapFull: Bool {
        if case .lmdb(_, let code, _) = self { return code == MDB_MAP_FULL }
        return false
    }
}

@inline(__always)
func lmdbCheck(_ code: Int32, _ operation: @autoclosure () -> String) throws {
    guard code == MDB_SUCCESS else { throw CacheLogError.lmdb(operation(), code) }
}
