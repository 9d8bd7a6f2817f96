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

/// The named databases (tables) inside one environment.
struct Tables: Sendable, Equatable {
    /// seq (8 bytes big-endian) → record. Append-only, written with ``PutOptions/append``.
    var events: Table
    /// key (UTF-8) → the key's live entry (``StateRowCodec``): the state, updated in the
    /// append's transaction.
    var state: Table
    /// seq → compressed snapshot of the state after that seq.
    var checkpoints: Table
    /// name → value: format stamp and counters (``MetaKey``).
    var meta: Table
    /// key (UTF-8) → the seqs of the key's records, as sorted duplicates (8 bytes big-endian
    /// each): one key's history without a scan of the log. Written in the append's transaction.
    /// nil in a read-only open of a database whose format predates it (before format 2), which
    /// is then read by scanning; a writer creates it, and the engine fills it (``stampedFormat``).
    var keyIndex: Table?
    /// seq of a put that holds payload bytes → the seqs of the puts that need them, as sorted
    /// duplicates (8 bytes big-endian each): every reference to it, every delta against it.
    /// Written in the append's transaction; what compaction and retention ask before removing a
    /// record. nil in a read-only open of a database whose format predates it (before format 3),
    /// where nothing removes records; a writer creates it, and the engine fills it.
    var refs: Table?
    /// key (UTF-8) → u64 seq: where retention left the key's history starting (the record at
    /// that seq is kept as the version the history starts from; the key's records before it
    /// are gone). nil in a read-only open of a database from before format 3, which then has
    /// no trimmed history.
    var trims: Table?
    /// The format the database was stamped with when it was opened.
    var stampedFormat: UInt32
    /// Whether this open created the database.
    var createdNow = false

    static let names = (
        events: "events", state: "state", checkpoints: "checkpoints", meta: "meta", keyIndex: "keys", refs: "refs", trims: "trims"
    )

    /// The flags CacheLog gives the table `name` (nil: not one of its tables): sorted, fixed-size
    /// duplicates for the key index and `refs`, none for the others.
    static func flags(of name: String) -> UInt16? {
        switch name {
        case names.keyIndex, names.refs: UInt16(MDB_DUPSORT | MDB_DUPFIXED)
        case names.events, names.state, names.checkpoints, names.meta, names.trims: 0
        default: nil
        }
    }

    /// Opens (or, in a new environment, creates and stamps) the named databases, and refuses what
    /// is not a CacheLog database or is of a newer format when opened for writing.
    ///
    /// `like`: the tables of an earlier environment on the same database (a newer copy of it, for
    /// a reader without the lock file), whose handles the callers keep: the same tables are
    /// opened in the same order, so that they get the same handles, and a database whose tables
    /// no longer match is refused. Its format may have moved on; the earlier tables' is kept.
    static func open(in env: OpaquePointer, path: String, readOnly: Bool, like earlier: Tables? = nil) throws -> Tables {
        var txn: OpaquePointer?
        var code = mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
        // Another process grew the map between this open and its first transaction: adopt its
        // size (no transaction of this environment is open yet) and begin again (lmdb.h,
        // MDB_MAP_RESIZED).
        for _ in 0..<8 where code == MDB_MAP_RESIZED {
            try lmdbCheck(mdb_env_set_mapsize(env, 0), "mdb_env_set_mapsize")
            code = mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
        }
        try lmdbCheck(code, "mdb_txn_begin")
        guard let txn else { throw CacheLogError.lmdb("mdb_txn_begin", EINVAL) }
        var committed = false
        defer { if !committed { mdb_txn_abort(txn) } }
        let t = Transaction(raw: txn)

        var main: MDB_dbi = 0
        try lmdbCheck(mdb_dbi_open(txn, nil, 0, &main), "mdb_dbi_open")
        let isNew = try t.entryCount(Table(handle: main)) == 0
        if isNew && readOnly { throw CacheLogError.noDatabase(path: path) }

        func open(_ name: String, flags: Int32 = 0, create: Bool = isNew) throws -> Table? {
            var dbi: MDB_dbi = 0
            let code = mdb_dbi_open(txn, name, UInt32(flags) | (create ? UInt32(MDB_CREATE) : 0), &dbi)
            if code == MDB_NOTFOUND { return nil }
            if code == MDB_INCOMPATIBLE { throw CacheLogError.notADatabase(path: path, detail: "the \(name) table has other flags") }
            try lmdbCheck(code, "mdb_dbi_open(\(name))")
            // LMDB takes a table's flags from its catalog entry, unchecked: one bit flipped there
            // (integer keys) made every lookup miss while the log still verified clean.
            var found: UInt32 = 0
            try lmdbCheck(mdb_dbi_flags(txn, dbi, &found), "mdb_dbi_flags(\(name))")
            let persistent: UInt32 = 0x7E  // lmdb.h's flags from MDB_REVERSEKEY to MDB_REVERSEDUP
            if found & persistent != UInt32(flags) & persistent {
                throw CacheLogError.notADatabase(path: path, detail: "the \(name) table has other flags than CacheLog gives it: its catalog entry is damaged")
            }
            return Table(handle: dbi)
        }
        func require(_ name: String) throws -> Table {
            guard let table = try open(name) else { throw CacheLogError.notADatabase(path: path, detail: "no \(name) table") }
            return table
        }
        let meta = try require(names.meta)
        var version = Environment.formatVersion
        if isNew {
            try t.put(meta, MetaKey.magic, Environment.magic)
            try t.put(meta, MetaKey.format, MetaKey.formatValue(Environment.formatVersion))
        } else {
            guard let stamp = try t.get(meta, MetaKey.magic), stamp.elementsEqual(Environment.magic) else {
                throw CacheLogError.notADatabase(path: path, detail: "no CacheLog stamp")
            }
            guard let stored = try t.get(meta, MetaKey.format).flatMap(MetaKey.format(in:)) else {
                throw CacheLogError.notADatabase(path: path, detail: "no format version")
            }
            version = stored
            if version > Environment.formatVersion && !readOnly {
                throw CacheLogError.newerFormat(found: version, supported: Environment.formatVersion)
            }
        }
        // Sorted, fixed-size duplicates: a key's seqs in order, packed into pages of their own.
        // A reader trusts the index only from the format that fills it; a writer creates it when
        // missing, and the engine fills it before stamping that format.
        let keyIndexFlags = MDB_DUPSORT | MDB_DUPFIXED
        let indexed = earlier.map { $0.keyIndex != nil } ?? (version >= Environment.keyIndexFormat)
        let keyIndex = readOnly
            ? (indexed ? try open(names.keyIndex, flags: keyIndexFlags) : nil)
            : try open(names.keyIndex, flags: keyIndexFlags, create: true)
        // `refs` as the key index: a reader trusts it only from the format that fills it.
        let referenced = earlier.map { $0.refs != nil } ?? (version >= Environment.refsFormat)
        let refs = readOnly
            ? (referenced ? try open(names.refs, flags: keyIndexFlags) : nil)
            : try open(names.refs, flags: keyIndexFlags, create: true)
        // A reopen (of a reader's new private copy) opens what the first open did, in its order.
        let trims = readOnly
            ? (earlier.map { $0.trims != nil } ?? true ? try open(names.trims) : nil)
            : try open(names.trims, create: true)
        var tables = Tables(
            events: try require(names.events), state: try require(names.state), checkpoints: try require(names.checkpoints),
            meta: meta, keyIndex: keyIndex, refs: refs, trims: trims, stampedFormat: version, createdNow: isNew)
        if let earlier {
            tables.stampedFormat = earlier.stampedFormat
            guard tables == earlier else { throw CacheLogError.notADatabase(path: path, detail: "its tables changed while it was open") }
        }
        // Committing (also a read-only transaction) keeps the database handles open for the environment.
        committed = true
        try lmdbCheck(mdb_txn_commit(txn), "mdb_txn_commit")
        return tables
    }

}
