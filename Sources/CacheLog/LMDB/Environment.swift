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
import Locking
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
/// - A read-only open that may not write `lock.mdb` reads a private copy of the data file
///   instead; see ``unlocked``.
final class Environment: @unchecked Sendable {
    /// The LMDB environment. For a reader without the lock file, the one opened on its current
    /// copy: a read of the newest commit replaces it (holding `resizeLock` exclusive).
    private(set) var raw: OpaquePointer
    let path: String
    let readOnly: Bool
    /// Read-only, by a process that may read `data.mdb` but not write `lock.mdb` (another user's
    /// database, a lock file made read-only). LMDB's readers register in the lock file's reader
    /// table, which tells writers which pages are still being read; without it (`MDB_NOLOCK`),
    /// lmdb.h leaves it to the caller to "ensure that no readers are using old transactions while
    /// a writer is active", and this process cannot stop another's writer. So it reads none of
    /// the data file in LMDB: it reads a private copy of one commit (``PrivateCopy``), which no
    /// writer can reach, and copies again when a read asks for the newest commit and the data
    /// file has moved on (``read(_:_:)``). Memory: about the used size of `data.mdb` (its pages
    /// up to the newest commit's last), twice that while a newer copy replaces the old one.
    let unlocked: Bool
    let maxKeySize: Int
    let tables: Tables
    /// Commits are not flushed (``EventLog/Durability/unsynced``).
    let noSync: Bool
    private let resizeLock = ReadWriteLock()
    private let headroom = DataFileHeadroom()
    private let logger: Logger
    /// Without the lock file: `data.mdb`, open for reading its meta pages and copying it, and
    /// the commit the current copy holds. One copy is made at a time, under this lock.
    private let copySource: Locked<(dataFile: Int32, commit: Int)>?

    /// Format of the database as a whole, stamped in `meta` at creation.
    /// 2: the key index (``Tables/keyIndex``). A format-1 database is upgraded on its first
    /// open for writing; until then it is read by scanning.
    /// 3: delta puts (record format version 2) and the `refs` table (``Tables/refs``). A
    /// format-2 database is upgraded on its first open for writing, which fills `refs`; a
    /// writer of format 2 refuses format 3, so every record it could append lacks no entry.
    /// 4: dates stored as `Date` holds them (record format version 3, 29-byte state rows,
    /// checkpoints and `meta` values that say so), so that they read back `==`. What format 3
    /// wrote stays as it is and reads as it did; the upgrade only stamps the format, so that a
    /// writer of format 3, which would take every new record for a damaged one, refuses it.
    static let formatVersion: UInt32 = 4
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
        var (opening, code): (OpaquePointer?, Int32) = (nil, MDB_SUCCESS)
        if !unlocked {
            try MetaPages.refuseDamage(path)
            if !readOnly { try LockFileRoom.reserve(in: path) }
            let creating = !readOnly && access(path + "/data.mdb", F_OK) != 0
            (opening, code) = try Self.open(path, flags: flags, mapSize: mapSize)
            // A new database whose meta pages found no room is no database: its part of a page
            // would read as a truncated file at every later open, once there is room again.
            if creating && StorageErrorCode(rawValue: code).isNoRoom && DataFileLength.tooShortForMetaPages(path) {
                unlink(path + "/data.mdb")
            }
            // MDB_RDONLY still writes lock.mdb (lmdb.h, mdb_env_open): a reader that may read the
            // data but not the lock file reads a copy instead.
            unlocked = code == EACCES && readOnly && access(path + "/data.mdb", R_OK) == 0
        }
        var copied: (dataFile: Int32, commit: Int)?
        if unlocked {
            let dataFile = try PrivateCopy.openDataFile(path)
            do {
                let copy = try Self.openCopy(of: dataFile, path: path)
                (opening, code) = (copy.env, MDB_SUCCESS)
                copied = (dataFile, copy.commit)
            } catch {
                close(dataFile)
                throw error
            }
        }
        switch code {
        case MDB_SUCCESS: break
        case _ where StorageErrorCode(rawValue: code).isNoRoom:
            throw CacheLogError.lmdb("mdb_env_open", code)
        case _ where DataFileLength.tooShortForMetaPages(path):
            throw CacheLogError.truncated(path: path, size: DataFileLength.dataFileSize(path) ?? 0, expected: nil)
        case MDB_INVALID, MDB_VERSION_MISMATCH:
            // One damaged meta page was refused before the open (MetaPages.refuseDamage).
            throw CacheLogError.notADatabase(path: path, detail: String(cString: mdb_strerror(code)))
        case ENOENT where readOnly:
            throw CacheLogError.noDatabase(path: path)
        case EACCES where readOnly:
            throw CacheLogError.notReadable(path: path + "/data.mdb")
        case EACCES, EROFS:
            throw CacheLogError.notWritable(path: path, reason: WriteAccess.denial(errno: code))
        default:
            throw CacheLogError.lmdb("mdb_env_open", code)
        }
        guard let env = opening else { throw CacheLogError.lmdb(operation: "mdb_env_open", code: .outOfMemory) }
        // Until every property is set, a throw must close the environment here (deinit will not run).
        var opened = false
        defer {
            if !opened {
                mdb_env_close(env)
                if let copied { close(copied.dataFile) }
            }
        }

        // Before any transaction touches a page: a tree page past the end of the file (a SIGBUS),
        // or a page number or an offset that damage left there.
        try PageTreeCheck.run(in: env, path: path)

        // Slots of readers that died without ending their transaction pin old pages forever.
        var dead: Int32 = 0
        try lmdbCheck(mdb_reader_check(env, &dead), "mdb_reader_check")
        if dead > 0 { logger.info("cleared stale reader slots", metadata: ["count": "\(dead)"]) }

        let tables = try Tables.open(in: env, path: path, readOnly: readOnly)
        raw = env
        copySource = copied.map { Locked($0) }
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
        copySource?.withLock { _ = close($0.dataFile) }
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
    /// Without the lock file, the read is of a private copy (``PrivateCopy``): nothing another
    /// process writes reaches it. Making that copy (for `.newest`, when the data file has moved
    /// on) throws ``CacheLogError/overlappedWrites(path:)`` when another process committed more
    /// than once during each of ``copyAttempts`` copies.
    @available(*, noasync)
    func read<T>(_ recency: Recency = .newest, _ body: (Transaction) throws -> T) throws -> T {
        if recency == .newest { try copyNewestCommit() }
        let txn = try begin(readOnly: true)
        defer {
            mdb_txn_abort(txn)
            resizeLock.unlock()
        }
        return try body(Transaction(raw: txn))
    }

    /// Checks the pages of the commit `txn` reads (``PageTreeCheck``); false when its meta page
    /// was rewritten before it could be read (two commits since `txn` began).
    @available(*, noasync)
    func checkPages(_ txn: Transaction) throws -> Bool {
        try PageTreeCheck.check(env: raw, commit: Int(exactly: mdb_txn_id(txn.raw)) ?? -1, path: path)
    }

    /// How many copies a reader without the lock file makes before it says the database was
    /// busy: a copy fails only when a writer commits twice while it is made (a few milliseconds
    /// for 10 MB), so a few nearly always find a quiet moment.
    static let copyAttempts = 8

    /// Without the lock file: moves this environment onto a copy of the data file's newest
    /// commit, when that is not the commit its copy holds. Reads of the old copy finish first.
    private func copyNewestCommit() throws {
        guard let copySource else { return }
        try copySource.withLock { source in
            let live = try MetaPages.read(source.dataFile, path: path)
            guard live.metas[live.newest].commit != source.commit else { return }
            let copy = try Self.openCopy(of: source.dataFile, path: path)
            do {
                try PageTreeCheck.run(in: copy.env, path: path)
                _ = try Tables.open(in: copy.env, path: path, readOnly: true, like: tables)
            } catch {
                mdb_env_close(copy.env)
                throw error
            }
            resizeLock.lockExclusive()
            let old = raw
            raw = copy.env
            resizeLock.unlock()
            mdb_env_close(old)
            source.commit = copy.commit
        }
    }

    /// Copies the newest commit of the data file `dataFile` and opens LMDB on the copy: read-only,
    /// without a lock file (it is this process's alone), and by the copy's name, not a directory.
    /// `directory`: see ``PrivateCopy/take(of:path:attempts:directory:)``.
    static func openCopy(of dataFile: Int32, path: String, directory: String? = nil) throws -> (env: OpaquePointer, commit: Int) {
        let copy = try PrivateCopy.take(of: dataFile, path: path, attempts: copyAttempts, directory: directory)
        // LMDB opens a descriptor of its own; the copy lives as long as that one or its map.
        defer { copy.file.discard() }
        let flags = UInt32(MDB_NOTLS | MDB_RDONLY | MDB_NOLOCK | MDB_NOSUBDIR)
        let (opening, code) = try open(copy.file.path, flags: flags, mapSize: copy.length)
        guard code == MDB_SUCCESS, let env = opening else {
            if code == MDB_INVALID || code == MDB_VERSION_MISMATCH {
                throw CacheLogError.notADatabase(path: path, detail: String(cString: mdb_strerror(code)))
            }
            throw CacheLogError.lmdb("mdb_env_open(a copy of data.mdb)", code)
        }
        // LMDB must read the copy as MetaPages did: the commit copied, ending at the last page
        // copied. Otherwise this liblmdb lays its meta pages out differently, and the copy is not
        // read at all.
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        guard info.me_last_txnid == copy.commit, info.me_last_pgno == copy.lastPage else {
            mdb_env_close(env)
            throw CacheLogError.notADatabase(path: path, detail: "its meta pages are not laid out as this liblmdb reads them")
        }
        return (env, copy.commit)
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
