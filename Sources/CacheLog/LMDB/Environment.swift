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
import Logging

/// One open LMDB environment and the rules for using it.
///
/// - `MDB_NOTLS`: read transactions are not tied to threads, so any task may read, and a Swift
///   task hopping threads cannot trip LMDB's thread-local reader slots.
/// - Write transactions run only on the writer's queue (`Writer`), one at a time, and never span
///   an `await`: LMDB ties a write transaction to the thread that began it.
/// - `mdb_env_set_mapsize` may only be called when this process has no transaction open. Every
///   transaction holds `resizeLock` shared; growing or adopting the map size holds it exclusive.
/// - Never open the same environment twice in one process (lmdb.h, "Caveats"): `OpenPaths`.
/// - A read-only open that may not write `lock.mdb` opens without it (`MDB_NOLOCK`); see
///   ``unlocked``, and ``read(_:)`` for the check that makes its reads safe.
final class Environment: @unchecked Sendable {
    let raw: OpaquePointer
    let path: String
    let readOnly: Bool
    /// Opened with `MDB_NOLOCK`: read-only, by a process that may read `data.mdb` but not write
    /// `lock.mdb` (another user's database, a lock file made read-only). LMDB's readers register
    /// in the lock file's reader table, which tells writers which pages are still being read;
    /// without it, lmdb.h leaves it to the caller to "ensure that no readers are using old
    /// transactions while a writer is active". This process cannot stop another's writer, so
    /// each read checks afterwards that no writer could have reused its pages (``read(_:)``).
    let unlocked: Bool
    let maxKeySize: Int
    let tables: Tables
    /// Commits are not flushed (``EventLog/Durability/unsynced``).
    let noSync: Bool
    private let resizeLock = ReadWriteLock()
    private let headroom = DataFileHeadroom()
    private let logger: Logger

    /// Format of the database as a whole, stamped in `meta` at creation.
    /// 2: the key index (``Tables/keyIndex``). A format-1 database is upgraded on its first
    /// open for writing; until then it is read by scanning.
    /// 3: delta puts (record format version 2) and the `refs` table (``Tables/refs``). A
    /// format-2 database is upgraded on its first open for writing, which fills `refs`; a
    /// writer of format 2 refuses format 3, so every record it could append lacks no entry.
    static let formatVersion: UInt32 = 3
    /// The first format whose key index is complete.
    static let keyIndexFormat: UInt32 = 2
    /// The first format whose `refs` table is complete.
    static let refsFormat: UInt32 = 3
    static let magic = Array("cachelog".utf8)

    /// `withoutLock` opens a read-only environment ``unlocked`` at once, as one that may not
    /// write `lock.mdb` opens: the tests' way there, since no file mode keeps root from writing.
    init(path: String, readOnly: Bool, noSync: Bool, mapSize: Int, logger: Logger, withoutLock: Bool = false) throws {
        var flags = UInt32(MDB_NOTLS)
        if readOnly { flags |= UInt32(MDB_RDONLY) }
        if noSync { flags |= UInt32(MDB_NOSYNC) }
        var unlocked = withoutLock && readOnly
        var (opening, code) = try Self.open(path, flags: unlocked ? flags | UInt32(MDB_NOLOCK) : flags, mapSize: mapSize)
        // MDB_RDONLY still writes lock.mdb (lmdb.h, mdb_env_open): a reader that may read the data
        // but not the lock file opens without locks instead, which MDB_NOLOCK allows read-only.
        if code == EACCES && readOnly && !unlocked && access(path + "/data.mdb", R_OK) == 0 {
            (opening, code) = try Self.open(path, flags: flags | UInt32(MDB_NOLOCK), mapSize: mapSize)
            unlocked = true
        }
        switch code {
        case MDB_SUCCESS: break
        case _ where DataFileLength.tooShortForMetaPages(path):
            throw CacheLogError.truncated(path: path, size: DataFileLength.dataFileSize(path) ?? 0, expected: nil)
        case MDB_INVALID, MDB_VERSION_MISMATCH:
            throw CacheLogError.notADatabase(path: path, detail: String(cString: mdb_strerror(code)))
        case ENOENT where readOnly:
            throw CacheLogError.noDatabase(path: path)
        case EACCES where readOnly:
            throw CacheLogError.notReadable(path: path)
        case EACCES, EROFS:
            throw CacheLogError.notWritable(path: path)
        default:
            throw CacheLogError.lmdb("mdb_env_open", code)
        }
        guard let env = opening else { throw CacheLogError.lmdb(operation: "mdb_env_open", code: .outOfMemory) }
        // Until every property is set, a throw must close the environment here (deinit will not run).
        var opened = false
        defer { if !opened { mdb_env_close(env) } }

        // Before any transaction touches a page (a page past the end of the file is a SIGBUS).
        try DataFileLength.check(env, path: path)

        // Slots of readers that died without ending their transaction pin old pages forever.
        var dead: Int32 = 0
        try lmdbCheck(mdb_reader_check(env, &dead), "mdb_reader_check")
        if dead > 0 { logger.info("cleared stale reader slots", metadata: ["count": "\(dead)"]) }

        // Opening the tables reads too: checked as ``read(_:)`` checks its reads.
        let before = Self.lastCommit(env)
        let tables = try Tables.open(in: env, path: path, readOnly: readOnly)
        if unlocked && Self.lastCommit(env) > before + 1 { throw CacheLogError.overlappedWrites(path: path) }
        raw = env
        self.path = path
        self.readOnly = readOnly
        self.unlocked = unlocked
        self.noSync = noSync
        self.logger = logger
        self.tables = tables
        maxKeySize = Int(mdb_env_get_maxkeysize(env))
        opened = true
    }

    /// The longest key liblmdb accepts: a constant of the library it was built with
    /// (`MDB_MAXKEYSIZE`), the same for every environment, read from a throwaway one.
    static let keySizeLimit: Int = {
        var env: OpaquePointer?
        guard mdb_env_create(&env) == MDB_SUCCESS, let env else { return 511 }
        defer { mdb_env_close(env) }
        return Int(mdb_env_get_maxkeysize(env))
    }()

    deinit {
        mdb_env_close(raw)
        OpenPaths.release(path)
    }

    /// Creates an environment and opens it with `flags`: the environment and `MDB_SUCCESS`, or
    /// nil and the code `mdb_env_open` failed with (the environment closed, as lmdb.h asks).
    private static func open(_ path: String, flags: UInt32, mapSize: Int) throws -> (OpaquePointer?, Int32) {
        var created: OpaquePointer?
        try lmdbCheck(mdb_env_create(&created), "mdb_env_create")
        guard let env = created else { throw CacheLogError.lmdb(operation: "mdb_env_create", code: .outOfMemory) }
        do {
            try lmdbCheck(mdb_env_set_maxdbs(env, 8), "mdb_env_set_maxdbs")
            try lmdbCheck(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
        } catch {
            mdb_env_close(env)
            throw error
        }
        // The files it creates are the owner's only: a cache may hold personal data or tokens.
        let code = mdb_env_open(env, path, flags, 0o600)
        guard code == MDB_SUCCESS else {
            mdb_env_close(env)
            return (nil, code)
        }
        return (env, code)
    }

    /// Runs `body` in a short read transaction. Everything `body` returns must be copied out of
    /// the map: the transaction ends when it returns.
    ///
    /// Opened ``unlocked``, no writer knows of this read, so its pages are checked afterwards. A
    /// writer reuses only pages freed by transactions at least two before its own (lmdb.c,
    /// `mdb_find_oldest` with no reader table), and the pages of snapshot S are freed by S+1 at
    /// the earliest: only transaction S+3 may overwrite them, and it begins after S+2 committed.
    /// So a read of S that ends with the newest commit at most S+1 read nothing overwritten;
    /// otherwise it throws ``CacheLogError/overlappedWrites(path:)`` instead of its result, which
    /// may rest on pages rewritten under it (whatever `body` gathered is discarded with it).
    @available(*, noasync)
    func read<T>(_ body: (Transaction) throws -> T) throws -> T {
        let txn = try begin(readOnly: true)
        let snapshot = mdb_txn_id(txn)
        let result = Result { try body(Transaction(raw: txn)) }
        mdb_txn_abort(txn)
        resizeLock.unlock()
        // The unlock above and the lock in `lastCommit` order every read of the body before this one.
        if unlocked && lastCommit > snapshot + 1 {
            throw CacheLogError.overlappedWrites(path: path)
        }
        return try result.get()
    }

    /// ``read(_:)``, made again when a read without the lock file overlapped two commits of
    /// another process, up to ``overlapAttempts`` reads in all: only for a `body` whose one effect
    /// is its result (it may run more than once). A writer that commits without pause can still
    /// outrun every attempt; ``CacheLogError/overlappedWrites(path:)`` then says so.
    @available(*, noasync)
    func readRetryingOverlaps<T>(_ body: (Transaction) throws -> T) throws -> T {
        var attempt = 1
        while true {
            do {
                return try read(body)
            } catch CacheLogError.overlappedWrites where attempt < Self.overlapAttempts {
                attempt += 1
            }
        }
    }

    /// How many reads ``readRetryingOverlaps(_:)`` makes: each overlaps two commits only while a
    /// writer commits more than once during it, so a few reads nearly always find a quiet moment.
    static let overlapAttempts = 8

    /// The newest committed transaction, read from the meta pages.
    private var lastCommit: Int {
        resizeLock.lockShared()
        defer { resizeLock.unlock() }
        return Self.lastCommit(raw)
    }

    private static func lastCommit(_ env: OpaquePointer) -> Int {
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        return info.me_last_txnid
    }

    /// Runs `body` in a write transaction and commits it. Call only from the writer's queue.
    ///
    /// On `MDB_MAP_FULL` (from a put or from the commit) the transaction is gone or aborted, the
    /// map is doubled while no transaction of this process is open, and `body` runs again from
    /// the start: it must be safe to replay. After a failed `mdb_txn_commit` the transaction is
    /// already freed, so it is never aborted (lmdb.h: "the transaction handle is freed").
    @available(*, noasync)
    func write<T>(_ body: (Transaction) throws -> T) throws -> T {
        guard !readOnly else { throw CacheLogError.readOnly }
        while true {
            do {
                return try writeOnce(body)
            } catch let error as CacheLogError where error.isMapFull {
                try growMap()
            } catch CacheLogError.lmdb(let operation, let code) where code == .ioError && fileSystemIsFull {
                // LMDB reports a short write (the disk had room for part of the pages) as EIO.
                // On a file system left with no room that is a full disk, as ENOSPC is.
                throw CacheLogError.storageFull(operation: operation, code: code)
            } catch CacheLogError.lmdb(let operation, let code) where code == .ioError && fileSizeLimitReached {
                // The same short write at the process's file-size limit: the pages past it got
                // EFBIG, which is what the commit ran into.
                throw CacheLogError.storageFull(operation: operation, code: StorageErrorCode(rawValue: EFBIG))
            }
        }
    }

    /// Less room left on the database's file system than a commit writes at once (LMDB writes
    /// up to 64 pages per call): what a short write leaves behind when the disk fills up.
    private var fileSystemIsFull: Bool {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return false }
        // Root may write into the blocks reserved for it, so it runs out only when they are gone too.
        let blocks = getuid() == 0 ? info.f_bfree : info.f_bavail
        return UInt64(blocks) * UInt64(info.f_frsize) < 1 << 20
    }

    /// The data file is as long as this process may make a file (RLIMIT_FSIZE).
    private var fileSizeLimitReached: Bool {
        guard let limit = DataFileLength.processFileSizeLimit, let size = DataFileLength.dataFileSize(path) else { return false }
        return UInt64(size) >= limit
    }

    private func writeOnce<T>(_ body: (Transaction) throws -> T) throws -> T {
        let txn = try begin(readOnly: false)
        defer { resizeLock.unlock() }
        let result: T
        do {
            result = try body(Transaction(raw: txn))
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        // Only a flushed commit pays for a file that grows (see DataFileHeadroom).
        if !noSync { headroom.ensure(raw) }
        try lmdbCheck(mdb_txn_commit(txn), "mdb_txn_commit")
        return result
    }

    /// Begins a transaction holding `resizeLock` shared; the caller ends the transaction, then
    /// unlocks. When another process has grown the map past ours (`MDB_MAP_RESIZED`), adopts
    /// its size with no transaction open, and begins again.
    private func begin(readOnly: Bool) throws -> OpaquePointer {
        while true {
            resizeLock.lockShared()
            var txn: OpaquePointer?
            let code = mdb_txn_begin(raw, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
            if code == MDB_MAP_RESIZED {
                resizeLock.unlock()
                try adoptGrownMap()
                continue
            }
            guard code == MDB_SUCCESS, let txn else {
                resizeLock.unlock()
                throw CacheLogError.lmdb("mdb_txn_begin", code == MDB_SUCCESS ? EINVAL : code)
            }
            return txn
        }
    }

    /// `mdb_env_info` reads the meta pages through the map, which a resize unmaps: read it under
    /// the resize lock like any transaction.
    var mapSize: Int {
        resizeLock.lockShared()
        defer { resizeLock.unlock() }
        return unlockedMapSize
    }

    private var unlockedMapSize: Int {
        var info = MDB_envinfo()
        mdb_env_info(raw, &info)
        return info.me_mapsize
    }

    /// Bytes of the map in use: pages up to the last one written.
    var mapUsed: Int {
        resizeLock.lockShared()
        defer { resizeLock.unlock() }
        var info = MDB_envinfo()
        mdb_env_info(raw, &info)
        var stat = MDB_stat()
        mdb_env_stat(raw, &stat)
        return (info.me_last_pgno + 1) * Int(stat.ms_psize)
    }

    func sync() throws {
        try lmdbCheck(mdb_env_sync(raw, 1), "mdb_env_sync")
    }

    private func growMap() throws {
        resizeLock.lockExclusive()
        defer { resizeLock.unlock() }
        let old = unlockedMapSize
        let new = old * 2
        try lmdbCheck(mdb_env_set_mapsize(raw, new), "mdb_env_set_mapsize")
        logger.notice("grew the map", metadata: ["from": "\(old)", "to": "\(new)", "path": "\(path)"])
    }

    private func adoptGrownMap() throws {
        resizeLock.lockExclusive()
        defer { resizeLock.unlock() }
        // Size 0 means "adopt the size another process has set" (lmdb.h, mdb_env_set_mapsize).
        try lmdbCheck(mdb_env_set_mapsize(raw, 0), "mdb_env_set_mapsize")
        logger.info("adopted a map grown by another process", metadata: ["size": "\(unlockedMapSize)"])
    }
}
