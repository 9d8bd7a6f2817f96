import CLMDB
import Foundation

/// A borrowed view of an open LMDB transaction. Values it returns point into the memory map and
/// are valid only until the transaction ends: callers copy or decode them before that (lmdb.h,
/// `mdb_get`: "The memory pointed to by the returned values is owned by the database").
struct Transaction {
    let raw: OpaquePointer

    func get(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let code = mdb_get(raw, dbi, &k, &v)
        if code == MDB_NOTFOUND { return nil }
        try lmdbCheck(code, "mdb_get")
        return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    }

    func get(_ dbi: MDB_dbi, _ key: [UInt8]) throws -> UnsafeRawBufferPointer? {
        try key.withUnsafeBytes { (k) throws in try get(dbi, k) }
    }

    func put(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: Int32 = 0) throws {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        try lmdbCheck(mdb_put(raw, dbi, &k, &v, UInt32(bitPattern: flags)), "mdb_put")
    }

    func put(_ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8], flags: Int32 = 0) throws {
        try key.withUnsafeBytes { (k) throws in
            try value.withUnsafeBytes { (v) throws in try put(dbi, k, v, flags: flags) }
        }
    }

    /// Returns false when the key was not there.
    @discardableResult
    func delete(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer) throws -> Bool {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let code = mdb_del(raw, dbi, &k, nil)
        if code == MDB_NOTFOUND { return false }
        try lmdbCheck(code, "mdb_del")
        return true
    }

    @discardableResult
    func delete(_ dbi: MDB_dbi, _ key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { (k) throws in try delete(dbi, k) }
    }

    /// Empties a database, keeping its handle open (`mdb_drop` with del = 0).
    func empty(_ dbi: MDB_dbi) throws {
        try lmdbCheck(mdb_drop(raw, dbi, 0), "mdb_drop")
    }

    func entryCount(_ dbi: MDB_dbi) throws -> Int {
        var stat = MDB_stat()
        try lmdbCheck(mdb_stat(raw, dbi, &stat), "mdb_stat")
        return stat.ms_entries
    }

    func stat(_ dbi: MDB_dbi) throws -> MDB_stat {
        var stat = MDB_stat()
        try lmdbCheck(mdb_stat(raw, dbi, &stat), "mdb_stat")
        return stat
    }

    /// Runs `body` with a cursor that is closed when it returns (a cursor must not outlive its
    /// transaction; in a write transaction it is closed before commit).
    func withCursor<T>(_ dbi: MDB_dbi, _ body: (inout Cursor) throws -> T) throws -> T {
        var cursor: OpaquePointer?
        try lmdbCheck(mdb_cursor_open(raw, dbi, &cursor), "mdb_cursor_open")
        guard let opened = cursor else { throw CacheLogError.lmdb("mdb_cursor_open", EINVAL) }
        defer { mdb_cursor_close(opened) }
        var wrapped = Cursor(raw: opened)
        return try body(&wrapped)
    }
}

/// A cursor position: the key and value under it, both pointing into the map.
struct CursorEntry {
    var key: UnsafeRawBufferPointer
    var value: UnsafeRawBufferPointer
}

struct Cursor {
    let raw: OpaquePointer

    /// Moves the cursor; nil when there is no such entry (MDB_NOTFOUND).
    mutating func move(_ op: MDB_cursor_op) throws -> CursorEntry? {
        var k = MDB_val()
        var v = MDB_val()
        return try finish(mdb_cursor_get(raw, &k, &v, op), &k, &v)
    }

    /// Positions at the first key >= `key` (MDB_SET_RANGE).
    mutating func seek(atLeast key: [UInt8]) throws -> CursorEntry? {
        try key.withUnsafeBytes { (bytes) throws in
            var k = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            var v = MDB_val()
            return try finish(mdb_cursor_get(raw, &k, &v, MDB_SET_RANGE), &k, &v)
        }
    }

    /// Positions at the last key <= `key`.
    mutating func seek(atMost key: [UInt8]) throws -> CursorEntry? {
        if let found = try seek(atLeast: key) {
            if found.key.elementsEqual(key) { return found }
            return try move(MDB_PREV)
        }
        return try move(MDB_LAST)
    }

    private func finish(_ code: Int32, _ k: inout MDB_val, _ v: inout MDB_val) throws -> CursorEntry? {
        if code == MDB_NOTFOUND { return nil }
        try lmdbCheck(code, "mdb_cursor_get")
        return CursorEntry(
            key: UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
            value: UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }
}
