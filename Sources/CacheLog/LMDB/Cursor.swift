internal import CLMDB

/// The rows of one table in key order (or in reverse), read through an LMDB cursor: like GRDB's
/// `Cursor`, `next()` throws and returns nil at the end. The first `next()` lands on the start;
/// each later one moves one row on in the cursor's direction.
///
/// A cursor lives inside ``Transaction/withCursor(_:from:reverse:_:)`` only: it must not outlive
/// its transaction, and in a write transaction it is closed before the commit.
struct Cursor {
    private let raw: OpaquePointer
    private let start: Start
    private let reverse: Bool
    private var started = false

    init(raw: OpaquePointer, start: Start, reverse: Bool) {
        self.raw = raw
        self.start = start
        self.reverse = reverse
    }

    @available(*, noasync)
    mutating func next() throws -> Row? {
        guard started else {
            started = true
            switch start {
            case .first: return try first()
            case .last: return try last()
            case .atLeast(let key): return try seek(atLeast: key)
            case .atMost(let key): return try seek(atMost: key)
            case .value(let key, let value, let atMost):
                return try atMost ? seek(key: key, valueAtMost: value) : seek(key: key, valueAtLeast: value)
            }
        }
        if case .value = start { return try move(reverse ? MDB_PREV_DUP : MDB_NEXT_DUP) }
        return try move(reverse ? MDB_PREV : MDB_NEXT)
    }

    @available(*, noasync)
    func first() throws -> Row? { try move(MDB_FIRST) }

    @available(*, noasync)
    func last() throws -> Row? { try move(MDB_LAST) }

    @available(*, noasync)
    func previous() throws -> Row? { try move(MDB_PREV) }

    /// In a table of sorted duplicates, the first value of the next key: one step per key, not per value.
    @available(*, noasync)
    func nextKey() throws -> Row? { try move(MDB_NEXT_NODUP) }

    /// Positions at the first key >= `key`.
    @available(*, noasync)
    func seek(atLeast key: [UInt8]) throws -> Row? {
        try key.withUnsafeBytes { (bytes) throws in
            var k = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            var v = MDB_val()
            return try finish(mdb_cursor_get(raw, &k, &v, MDB_SET_RANGE), &k, &v)
        }
    }

    /// Positions at the last key <= `key`.
    @available(*, noasync)
    func seek(atMost key: [UInt8]) throws -> Row? {
        if let found = try seek(atLeast: key) {
            if found.key.elementsEqual(key) { return found }
            return try previous()
        }
        return try last()
    }

    /// In a table of sorted duplicates, positions at the first value >= `value` of `key`.
    @available(*, noasync)
    func seek(key: [UInt8], valueAtLeast value: [UInt8]) throws -> Row? {
        try key.withUnsafeBytes { (keyBytes) throws in
            try value.withUnsafeBytes { (valueBytes) throws in
                var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                var v = MDB_val(mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                return try finish(mdb_cursor_get(raw, &k, &v, MDB_GET_BOTH_RANGE), &k, &v)
            }
        }
    }

    /// In a table of sorted duplicates, positions at the last value <= `value` of `key`.
    @available(*, noasync)
    func seek(key: [UInt8], valueAtMost value: [UInt8]) throws -> Row? {
        if let found = try seek(key: key, valueAtLeast: value) {
            if found.value.elementsEqual(value) { return found }
            return try move(MDB_PREV_DUP)
        }
        // Every value of the key is below `value`, or the key is not there. LMDB's MDB_LAST_DUP
        // gives the value alone: the row is read again whole.
        guard try seek(key: key) != nil, try move(MDB_LAST_DUP) != nil else { return nil }
        return try move(MDB_GET_CURRENT)
    }

    /// Positions at `key` exactly (its first value, in a table of duplicates).
    @available(*, noasync)
    func seek(key: [UInt8]) throws -> Row? {
        try key.withUnsafeBytes { (bytes) throws in
            var k = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            var v = MDB_val()
            return try finish(mdb_cursor_get(raw, &k, &v, MDB_SET_KEY), &k, &v)
        }
    }

    private func move(_ op: MDB_cursor_op) throws -> Row? {
        var k = MDB_val()
        var v = MDB_val()
        return try finish(mdb_cursor_get(raw, &k, &v, op), &k, &v)
    }

    private func finish(_ code: Int32, _ k: inout MDB_val, _ v: inout MDB_val) throws -> Row? {
        if code == MDB_NOTFOUND { return nil }
        try lmdbCheck(code, "mdb_cursor_get")
        return Row(
            key: UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
            value: UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// A row under a cursor. Both buffers point into the map: valid until the cursor moves or the
    /// transaction ends, so callers copy or decode them first.
    struct Row {
        var key: UnsafeRawBufferPointer
        var value: UnsafeRawBufferPointer
    }

    /// Where a cursor's walk begins.
    enum Start {
        case first
        case last
        /// The first key at or after these bytes.
        case atLeast([UInt8])
        /// The last key at or before these bytes.
        case atMost([UInt8])
        /// In a table of sorted duplicates: the first value of `key` at or after `value` (or,
        /// with `atMost`, the last at or before it). The walk then stays within `key`'s values.
        case value(key: [UInt8], value: [UInt8], atMost: Bool)
    }
}
