import CLMDB
import Foundation
import Logging

/// The named databases inside one LMDB environment.
struct Databases {
    /// seq (8 bytes big-endian) → record. Append-only, written with MDB_APPEND.
    var events: MDB_dbi
    /// key (UTF-8) → live entry (`ProjectionEntry`). The projection; updated in the append's transaction.
    var state: MDB_dbi
    /// seq → compressed snapshot of the projection after that seq.
    var checkpoints: MDB_dbi
    /// name → value: format stamp and counters.
    var meta: MDB_dbi

    static let names = (events: "events", state: "state", checkpoints: "checkpoints", meta: "meta")
}

/// One open LMDB environment and the rules for using it.
///
/// - `MDB_NOTLS`: read transactions are not tied to threads, so any task may read, and a Swift
///   task hopping threads cannot trip LMDB's thread-local reader slots.
/// - Write transactions run only on the writer's queue (`Writer`), one at a time, and never span
///   an `await`: LMDB ties a write transaction to the thread that began it.
/// - `mdb_env_set_mapsize` may only be called when this process has no transaction open. Every
///   transaction holds `resizeLock` shared; growing or adopting the map size holds it exclusive.
/// - Never open the same environment twice in one process (lmdb.h, "Caveats"): `OpenPaths`.
final class Environment: @unchecked Sendable {
    let raw: OpaquePointer
    let path: String
    let readOnly: Bool
    let maxKeySize: Int
    let dbs: Databases
    private let resizeLock = ReadWriteLock()
    private let logger: Logger

    /// Format of the database as a whole, stamped in `meta` at creation.
    static let formatVersion: UInt32 = 1
    static let magic = Array("cachelog".utf8)

    init(path: String, readOnly: Bool, noSync: Bool, mapSize: Int, logger: Logger) throws {
        var created: OpaquePointer?
        try lmdbCheck(mdb_env_create(&created), "mdb_env_create")
        guard let env = created else { throw CacheLogError.lmdb("mdb_env_create", ENOMEM) }
        // Until every property is set, a throw must close the environment here (deinit will not run).
        var opened = false
        defer { if !opened { mdb_env_close(env) } }

        try lmdbCheck(mdb_env_set_maxdbs(env, 8), "mdb_env_set_maxdbs")
        try lmdbCheck(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
        var flags = UInt32(MDB_NOTLS)
        if readOnly { flags |= UInt32(MDB_RDONLY) }
        if noSync { flags |= UInt32(MDB_NOSYNC) }
        let code = mdb_env_open(env, path, flags, 0o644)
        switch code {
        case MDB_SUCCESS: break
        case _ where Environment.tooShortForMetaPages(path):
            throw CacheLogError.truncated(path: path, size: Environment.dataFileSize(path) ?? 0, expected: nil)
        case MDB_INVALID, MDB_VERSION_MISMATCH:
            throw CacheLogError.notADatabase(path: path, detail: String(cString: mdb_strerror(code)))
        case ENOENT where readOnly:
            throw CacheLogError.noDatabase(path: path)
        case EACCES, EROFS:
            throw CacheLogError.notWritable(path: path)
        default:
            throw CacheLogError.lmdb("mdb_env_open", code)
        }

        // LMDB maps the file and reads pages through the map: a page past the end of a truncated
        // file is a SIGBUS, not an error code. Compare the file with the last page LMDB's meta
        // says is in use before any transaction touches a page.
        try Environment.checkLength(env, path: path)

        // Slots of readers that died without ending their transaction pin old pages forever.
        var dead: Int32 = 0
        try lmdbCheck(mdb_reader_check(env, &dead), "mdb_reader_check")
        if dead > 0 { logger.info("cleared stale reader slots", metadata: ["count": "\(dead)"]) }

        let dbs = try Environment.openDatabases(env, path: path, readOnly: readOnly)
        raw = env
        self.path = path
        self.readOnly = readOnly
        self.logger = logger
        self.dbs = dbs
        maxKeySize = Int(mdb_env_get_maxkeysize(env))
        opened = true
    }

    /// Refuses a data file shorter than the pages its meta says are in use. The meta pages
    /// themselves were read with `pread` by `mdb_env_open`, which fails cleanly on a file too
    /// short to hold them; a file of size 0 is one that `mdb_env_open` has just created.
    ///
    /// The meta is read before the file's size: another process may commit in between, and a
    /// commit writes its pages (growing the file) before the meta that counts them, so a size
    /// taken after the meta is never short of it. Taken the other way round, a commit in between
    /// made a healthy, growing database look truncated.
    private static func checkLength(_ env: OpaquePointer, path: String) throws {
        var info = MDB_envinfo()
        try lmdbCheck(mdb_env_info(env, &info), "mdb_env_info")
        var pageStats = MDB_stat()
        try lmdbCheck(mdb_env_stat(env, &pageStats), "mdb_env_stat")
        var fd: mdb_filehandle_t = -1
        try lmdbCheck(mdb_env_get_fd(env, &fd), "mdb_env_get_fd")
        var file = stat()
        guard fstat(fd, &file) == 0 else { throw CacheLogError.lmdb("fstat(data.mdb)", errno) }
        let (pages, overflow) = info.me_last_pgno.addingReportingOverflow(1)
        let (needed, tooBig) = pages.multipliedReportingOverflow(by: Int(pageStats.ms_psize))
        let size = Int(file.st_size)
        if overflow || tooBig || size < needed {
            throw CacheLogError.truncated(path: path, size: size, expected: tooBig || overflow ? nil : needed)
        }
    }

    /// The size of `path`/data.mdb, when it exists.
    private static func dataFileSize(_ path: String) -> Int? {
        var file = stat()
        guard stat(path + "/data.mdb", &file) == 0 else { return nil }
        return Int(file.st_size)
    }

    /// An open that failed on a data file too short for LMDB's two meta pages: an existing file
    /// cut short (a new one is created under LMDB's exclusive lock before anyone else opens it).
    private static func tooShortForMetaPages(_ path: String) -> Bool {
        guard let size = dataFileSize(path) else { return false }
        return size < 2 * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    deinit {
        mdb_env_close(raw)
        OpenPaths.release(path)
    }

    /// Opens (or, in a new environment, creates and stamps) the named databases, and refuses what
    /// is not a CacheLog database or is of a newer format when opened for writing.
    private static func openDatabases(_ env: OpaquePointer, path: String, readOnly: Bool) throws -> Databases {
        var txn: OpaquePointer?
        try lmdbCheck(mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn), "mdb_txn_begin")
        guard let txn else { throw CacheLogError.lmdb("mdb_txn_begin", EINVAL) }
        var committed = false
        defer { if !committed { mdb_txn_abort(txn) } }
        let t = Transaction(raw: txn)

        var main: MDB_dbi = 0
        try lmdbCheck(mdb_dbi_open(txn, nil, 0, &main), "mdb_dbi_open")
        let isNew = try t.entryCount(main) == 0
        if isNew && readOnly { throw CacheLogError.noDatabase(path: path) }

        func open(_ name: String) throws -> MDB_dbi {
            var dbi: MDB_dbi = 0
            let code = mdb_dbi_open(txn, name, isNew ? UInt32(MDB_CREATE) : 0, &dbi)
            if code == MDB_NOTFOUND || code == MDB_INCOMPATIBLE {
                throw CacheLogError.notADatabase(path: path, detail: "no \(name) table")
            }
            try lmdbCheck(code, "mdb_dbi_open(\(name))")
            return dbi
        }
        let meta = try open(Databases.names.meta)
        if isNew {
            try t.put(meta, MetaKey.magic, magic)
            try t.put(meta, MetaKey.format, withUnsafeBytes(of: formatVersion.bigEndian) { Array($0) })
        } else {
            guard let stamp = try t.get(meta, MetaKey.magic), stamp.elementsEqual(magic) else {
                throw CacheLogError.notADatabase(path: path, detail: "no CacheLog stamp")
            }
            guard let format = try t.get(meta, MetaKey.format), format.count == 4 else {
                throw CacheLogError.notADatabase(path: path, detail: "no format version")
            }
            let version = UInt32(bigEndian: format.loadUnaligned(as: UInt32.self))
            if version > formatVersion && !readOnly {
                throw CacheLogError.newerFormat(found: version, supported: formatVersion)
            }
        }
        let dbs = Databases(
            events: try open(Databases.names.events), state: try open(Databases.names.state),
            checkpoints: try open(Databases.names.checkpoints), meta: meta)
        // Committing (also a read-only transaction) keeps the database handles open for the environment.
        committed = true
        try lmdbCheck(mdb_txn_commit(txn), "mdb_txn_commit")
        return dbs
    }

    /// Runs `body` in a short read transaction. Everything `body` returns must be copied out of
    /// the map: the transaction ends when it returns.
    func read<T>(_ body: (Transaction) throws -> T) throws -> T {
        let txn = try begin(readOnly: true)
        defer {
            mdb_txn_abort(txn)
            resizeLock.unlock()
        }
        return try body(Transaction(raw: txn))
    }

    /// Runs `body` in a write transaction and commits it. Call only from the writer's queue.
    ///
    /// On `MDB_MAP_FULL` (from a put or from the commit) the transaction is gone or aborted, the
    /// map is doubled while no transaction of this process is open, and `body` runs again from
    /// the start: it must be safe to replay. After a failed `mdb_txn_commit` the transaction is
    /// already freed, so it is never aborted (lmdb.h: "the transaction handle is freed").
    func write<T>(_ body: (Transaction) throws -> T) throws -> T {
        guard !readOnly else { throw CacheLogError.readOnly }
        while true {
            do {
                return try writeOnce(body)
            } catch let error as CacheLogError where error.isMapFull {
                try growMap()
            } catch CacheLogError.lmdb(let operation, let code, let message) where code == EIO && fileSystemIsFull {
                // LMDB reports a short write (the disk had room for part of the pages) as EIO.
                // On a file system left with no room that is a full disk, as ENOSPC is.
                throw CacheLogError.storageFull(operation: operation, code: code, message: message)
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

/// Keys of the `meta` table.
enum MetaKey {
    static let magic = Array("magic".utf8)
    static let format = Array("format".utf8)
    /// u64: the last sequence number ever assigned (survives compaction of the tail records).
    static let lastSeq = Array("lastSeq".utf8)
    /// f64: the last `recordedAt`, so recorded time never goes backward in the log.
    static let lastRecordedAt = Array("lastRecordedAt".utf8)
    /// u64: seq of the newest checkpoint.
    static let checkpointSeq = Array("checkpointSeq".utf8)
    /// u64: the checkpoint that stands for everything compacted away (0: nothing compacted).
    static let baseSeq = Array("baseSeq".utf8)
}

/// A pthread read-write lock: many transactions at once, or one map resize alone.
final class ReadWriteLock: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)

    init() { pthread_rwlock_init(lock, nil) }
    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func lockShared() { pthread_rwlock_rdlock(lock) }
    func lockExclusive() { pthread_rwlock_wrlock(lock) }
    func unlock() { pthread_rwlock_unlock(lock) }
}
