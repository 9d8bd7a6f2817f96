internal import CLMDB

/// A borrowed view of an open LMDB transaction. Values it returns point into the memory map and
/// are valid only until the transaction ends: callers copy or decode them before that (lmdb.h,
/// `mdb_get`: "The memory pointed to by the returned values is owned by the database").
///
/// Every method is unavailable from async code: LMDB ties a write transaction to the thread
/// that began it, and a task may resume on another thread after any `await`. Code that holds a
/// transaction therefore cannot suspend, which the compiler checks.
struct Transaction {
    let raw: OpaquePointer

    @available(*, noasync)
    func get(_ table: Table, _ key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let code = mdb_get(raw, table.handle, &k, &v)
        if code == MDB_NOTFOUND { return nil }
        try lmdbCheck(code, "mdb_get")
        return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    }

    @available(*, noasync)
    func get(_ table: Table, _ key: [UInt8]) throws -> UnsafeRawBufferPointer? {
        try key.withUnsafeBytes { (k) throws in try get(table, k) }
    }

    @available(*, noasync)
    func put(_ table: Table, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, options: PutOptions = []) throws {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        try lmdbCheck(mdb_put(raw, table.handle, &k, &v, options.rawValue), "mdb_put")
    }

    @available(*, noasync)
    func put(_ table: Table, _ key: [UInt8], _ value: [UInt8], options: PutOptions = []) throws {
        try key.withUnsafeBytes { (k) throws in
            try value.withUnsafeBytes { (v) throws in try put(table, k, v, options: options) }
        }
    }

    /// Returns false when the key was not there.
    @available(*, noasync)
    @discardableResult
    func delete(_ table: Table, _ key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { (bytes) throws in
            var k = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            let code = mdb_del(raw, table.handle, &k, nil)
            if code == MDB_NOTFOUND { return false }
            try lmdbCheck(code, "mdb_del")
            return true
        }
    }

    /// Removes one value of `key` from a table of sorted duplicates. Returns false when it was not there.
    @available(*, noasync)
    @discardableResult
    func delete(_ table: Table, _ key: [UInt8], value: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { (keyBytes) throws in
            try value.withUnsafeBytes { (valueBytes) throws in
                var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                var v = MDB_val(mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                let code = mdb_del(raw, table.handle, &k, &v)
                if code == MDB_NOTFOUND { return false }
                try lmdbCheck(code, "mdb_del")
                return true
            }
        }
    }

    /// Removes every row of `table`, keeping the table.
    @available(*, noasync)
    func empty(_ table: Table) throws {
        try lmdbCheck(mdb_drop(raw, table.handle, 0), "mdb_drop")
    }

    @available(*, noasync)
    func entryCount(_ table: Table) throws -> Int {
        var stat = MDB_stat()
        try lmdbCheck(mdb_stat(raw, table.handle, &stat), "mdb_stat")
        return stat.ms_entries
    }

    /// The bytes of the pages `table`'s tree uses (branch, leaf and overflow pages).
    @available(*, noasync)
    func bytesInUse(_ table: Table) throws -> Int {
        var stat = MDB_stat()
        try lmdbCheck(mdb_stat(raw, table.handle, &stat), "mdb_stat")
        return (stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages) * Int(stat.ms_psize)
    }

    /// The bytes of the pages every tree of the environment uses: the named tables, the main
    /// table that lists them, and LMDB's free list itself (dbi 0), with the two meta pages. Free
    /// pages are not counted: LMDB reuses them before it grows the file.
    @available(*, noasync)
    func bytesInUse(tables: [Table]) throws -> Int {
        // dbi 0 is LMDB's free list, dbi 1 the main table (lmdb.h: FREE_DBI, MAIN_DBI).
        let lmdbOwn = [Table(handle: 0), Table(handle: 1)]
        var total = 0
        for table in tables + lmdbOwn { total += try bytesInUse(table) }
        var stat = MDB_stat()
        try lmdbCheck(mdb_stat(raw, 1, &stat), "mdb_stat")
        return total + 2 * Int(stat.ms_psize)
    }

    /// The bytes of the data file up to the last page LMDB has used: how far the file has grown
    /// (it never shrinks; free pages below it are reused).
    @available(*, noasync)
    func fileExtent() -> Int {
        var info = MDB_envinfo()
        var stat = MDB_stat()
        let env = mdb_txn_env(raw)
        guard mdb_env_info(env, &info) == MDB_SUCCESS, mdb_env_stat(env, &stat) == MDB_SUCCESS else { return 0 }
        return (info.me_last_pgno + 1) * Int(stat.ms_psize)
    }

    /// Runs `body` with a cursor over `table` that begins at `start` and walks forward (or, with
    /// `reverse`, backward). The cursor is closed when `body` returns: it must not outlive its
    /// transaction, and in a write transaction it is closed before the commit.
    @available(*, noasync)
    func withCursor<T>(_ table: Table, from start: Cursor.Start = .first, reverse: Bool = false,
                       _ body: (inout Cursor) throws -> T) throws -> T {
        var cursor: OpaquePointer?
        try lmdbCheck(mdb_cursor_open(raw, table.handle, &cursor), "mdb_cursor_open")
        guard let opened = cursor else { throw CacheLogError.lmdb(operation: "mdb_cursor_open", code: .invalidArgument) }
        defer { mdb_cursor_close(opened) }
        var rows = Cursor(raw: opened, start: start, reverse: reverse)
        return try body(&rows)
    }

    /// Calls `body` with every row of `table` from `start` on, in key order.
    @available(*, noasync)
    func forEachRow(_ table: Table, from start: Cursor.Start = .first, _ body: (Cursor.Row) throws -> Void) throws {
        try withCursor(table, from: start) { rows in
            while let row = try rows.next() { try body(row) }
        }
    }
}
