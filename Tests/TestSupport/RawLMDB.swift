import CLMDB
import Foundation

/// The LMDB tables under a log, touched with the C API the way disk corruption or an outside
/// program would: tests plant bad bytes and read raw rows with these.
public enum RawLMDB {
    public struct Failure: Error, CustomStringConvertible {
        public let operation: String
        public let code: Int32
        public var description: String { "\(operation) failed: \(String(cString: mdb_strerror(code)))" }
    }

    /// Runs `body` in a write transaction of `environment` and commits it.
    public static func write(environment: OpaquePointer, _ body: (OpaquePointer) throws -> Void) throws {
        var txn: OpaquePointer?
        let begun = mdb_txn_begin(environment, nil, 0, &txn)
        guard begun == MDB_SUCCESS, let handle = txn else { throw Failure(operation: "mdb_txn_begin", code: begun) }
        do {
            try body(handle)
        } catch {
            mdb_txn_abort(handle)
            throw error
        }
        let committed = mdb_txn_commit(handle)
        guard committed == MDB_SUCCESS else { throw Failure(operation: "mdb_txn_commit", code: committed) }
    }

    public static func get(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: [UInt8]) -> [UInt8]? {
        var key = key
        return key.withUnsafeMutableBytes { k in
            var kv = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
            var v = MDB_val()
            guard mdb_get(txn, dbi, &kv, &v) == MDB_SUCCESS else { return nil }
            return Array(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
        }
    }

    @discardableResult
    public static func put(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8]) -> Int32 {
        var key = key, value = value
        return key.withUnsafeMutableBytes { k in
            value.withUnsafeMutableBytes { v in
                var kv = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
                var vv = MDB_val(mv_size: v.count, mv_data: v.baseAddress)
                return mdb_put(txn, dbi, &kv, &vv, 0)
            }
        }
    }

    public static func delete(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: [UInt8]) {
        var key = key
        key.withUnsafeMutableBytes { k in
            var kv = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
            _ = mdb_del(txn, dbi, &kv, nil)
        }
    }

    /// Removes one value of `key` from a table of sorted duplicates.
    public static func deleteDuplicate(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8]) throws {
        var key = key, value = value
        let code = key.withUnsafeMutableBytes { k in
            value.withUnsafeMutableBytes { v in
                var kv = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
                var vv = MDB_val(mv_size: v.count, mv_data: v.baseAddress)
                return mdb_del(txn, dbi, &kv, &vv)
            }
        }
        guard code == MDB_SUCCESS else { throw Failure(operation: "mdb_del", code: code) }
    }

    /// Every key and value of table `dbi`, copied (of a table of duplicates, each key's last value).
    public static func dump(environment: OpaquePointer, _ dbi: MDB_dbi) throws -> [[UInt8]: [UInt8]] {
        var txn: OpaquePointer?
        let begun = mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &txn)
        guard begun == MDB_SUCCESS, let handle = txn else { throw Failure(operation: "mdb_txn_begin", code: begun) }
        defer { mdb_txn_abort(handle) }
        var cursor: OpaquePointer?
        let opened = mdb_cursor_open(handle, dbi, &cursor)
        guard opened == MDB_SUCCESS else { throw Failure(operation: "mdb_cursor_open", code: opened) }
        defer { mdb_cursor_close(cursor) }
        var rows: [[UInt8]: [UInt8]] = [:]
        var k = MDB_val(), v = MDB_val()
        var op = MDB_FIRST
        while mdb_cursor_get(cursor, &k, &v, op) == MDB_SUCCESS {
            rows[Array(UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size))] =
                Array(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
            op = MDB_NEXT
        }
        return rows
    }
}
