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

/// How a log opens: what it checks of a database directory before LMDB sees it, LMDB's open,
/// and what its first open for writing adds.
enum LogOpening {
    /// Refuses what is not a database directory (a file, a stranger's directory, a data.mdb that
    /// is no file, one this user cannot write when the open would write) and creates a missing one
    /// when the options allow.
    ///
    /// - Parameters:
    ///   - path: The database directory.
    ///   - options: The open's options (``EventLog/Options/readOnly``, ``EventLog/Options/createIfMissing``).
    /// - Throws: ``CacheLogError/notADirectory(path:)``, ``CacheLogError/notADatabase(path:detail:)``,
    ///   ``CacheLogError/noDatabase(path:)``, ``CacheLogError/notReadable(path:)`` or
    ///   ``CacheLogError/notWritable(path:reason:)``.
    static func prepareDirectory(_ path: String, _ options: EventLog.Options) throws {
        if let isDirectory = isDirectory(atPath: path) {
            guard isDirectory else { throw CacheLogError.notADirectory(path: path) }
            let contents = try listing(path)
            if !contents.contains("data.mdb") {
                // Another process may be inside LMDB's open, creating this database right now:
                // it makes lock.mdb first and data.mdb a moment later. LMDB's exclusive lock on
                // lock.mdb then makes this open wait until that one has written the meta pages,
                // so a directory with nothing but lock.mdb is a database being born, not a stranger.
                // A stranger is named as one even to an open that would not create: a client
                // pointed at the wrong directory hears so when it opens, not at its first save.
                // A damaged data file moved aside is kept beside its new database, which may not
                // be there yet (another process moved it a moment ago).
                guard contents.allSatisfy({ $0 == "lock.mdb" || $0.hasPrefix("data.mdb.damaged-") }) else {
                    throw CacheLogError.notADatabase(path: path, detail: "directory holds other files and no data.mdb")
                }
                if !options.createIfMissing { throw CacheLogError.noDatabase(path: path) }
            } else {
                try refuseDataFileThatIsNoFile(in: path)
            }
            if !options.readOnly, let denial = WriteAccess.denial(of: path) {
                throw CacheLogError.notWritable(path: path, reason: denial)
            }
        } else {
            if !options.createIfMissing { throw CacheLogError.noDatabase(path: path) }
            try PrivateDirectory.create(path)
        }
    }

    /// Opens the environment of the database directory `path` (whose real path is `canonical`),
    /// claimed for this process until the log ends, moving a damaged data file aside when the
    /// options ask (``EventLog/Options/onDamage``).
    ///
    /// - Returns: the environment, and the damaged file moved aside, if one was.
    /// - Throws: what LMDB's open and the page check throw; the claim is let go then.
    static func openEnvironment(_ path: String, canonical: String, _ options: EventLog.Options, withoutLock: Bool) throws -> (Environment, DamagedDataFile?) {
        try OpenPaths.claim(canonical)
        func open() throws -> Environment {
            if !options.readOnly { try refuseEmptyDataFile(in: path) }
            return try Environment(
                path: canonical, readOnly: options.readOnly, noSync: options.durability == .unsynced,
                mapSize: options.initialMapSize, logger: options.logger, withoutLock: withoutLock)
        }
        do {
            guard options.onDamage == .moveAside && !options.readOnly else { return (try open(), nil) }
            return try DamagedDataFile.openMovingDamageAside(canonical, at: options.clock(), open)
        } catch {
            OpenPaths.release(canonical)
            throw error
        }
    }

    /// What an open for writing does once the log's parts exist: upgrades an older format, and
    /// gives a database created now its first record, the retention policy the options set (or,
    /// for one started over after damage, the default, and why).
    static func finish(_ environment: Environment, _ tables: LogTables, _ options: EventLog.Options, movedAside: DamagedDataFile?) throws {
        if !options.readOnly && environment.tables.stampedFormat < Environment.formatVersion {
            try upgradeFormat(environment, tables, logger: options.logger)
        }
        if let movedAside {
            options.logger.warning("moved a damaged database aside", metadata: ["to": "\(movedAside.movedTo)", "damage": "\(movedAside.damage)"])
        }
        let initialRetention = options.initialRetention ?? movedAside.map { _ in (RetentionPolicy.default, "CacheLog") }
        guard environment.tables.createdNow, let (policy, by) = initialRetention else { return }
        // Before any save: every process applies it from the start.
        let prepared = try EventCodec.prepare(.retention(policy, by: movedAside?.recordedBy(by) ?? by), maxKeySize: environment.maxKeySize)
        _ = try environment.write { txn in try tables.append(txn, batches: [(events: [prepared], conditions: [])], now: options.clock()) }
    }

    /// Gives a database written by an earlier format what this one adds (the key index, the
    /// `refs` table: one pass over the log, in one write transaction), on its first open for
    /// writing. Until then, reads scan the log for one key's history; nothing else needs them.
    static func upgradeFormat(_ environment: Environment, _ tables: LogTables, logger: Logger) throws {
        let started = ContinuousClock.now
        let added = try environment.write { txn in try tables.upgradeFormat(txn) }
        if added.keyIndex > 0 {
            logger.notice("built the key index", metadata: ["entries": "\(added.keyIndex)", "took": "\(ContinuousClock.now - started)"])
        }
        if added.refs > 0 {
            logger.notice("built the table of shared payloads", metadata: ["entries": "\(added.refs)", "took": "\(ContinuousClock.now - started)"])
        }
    }

    /// A data.mdb that is not a regular file (a FIFO, a directory, a device) is no database: LMDB's
    /// read-only open of a FIFO waited for a writer for ever, and a directory was called a
    /// truncated file. Links are followed, as LMDB's open follows them.
    private static func refuseDataFileThatIsNoFile(in path: String) throws {
        var info = stat()
        guard stat(path + "/data.mdb", &info) == 0 else { return }
        let kind: String? = switch info.st_mode & S_IFMT {
        case S_IFREG: nil
        case S_IFIFO: "a FIFO"
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
        if let kind { throw CacheLogError.notADatabase(path: path, detail: "its data.mdb is \(kind), not a file") }
    }

    /// The names in directory `path`. One this user may search but not list (mode 0311) lists
    /// as its data.mdb alone when it has one; one it may not search is refused, not taken for
    /// an empty directory (which would read as "no database" and create one).
    ///
    /// - Throws: ``CacheLogError/notReadable(path:)``.
    private static func listing(_ path: String) throws -> [String] {
        if let names = try? FileManager.default.contentsOfDirectory(atPath: path) { return names }
        if access(path + "/data.mdb", F_OK) == 0 { return ["data.mdb"] }
        if errno == ENOENT && access(path, W_OK | X_OK) == 0 { return [] }
        throw CacheLogError.notReadable(path: path)
    }

    /// LMDB takes an empty data.mdb for a new database and writes a fresh one over it, which
    /// would hide a file truncated to nothing. An empty data.mdb is also what a process creating
    /// the database has for the instant before it writes the meta pages (under LMDB's lock, in
    /// the same call), so the file gets a moment to grow before it is called truncated.
    static func refuseEmptyDataFile(in path: String) throws {
        let file = path + "/data.mdb"
        // stat, not FileManager's attributesOfItem: that one also looks up the owner's user and
        // group names, which `callgrind` of `cachelog load` counted as 5 % of the process.
        func size() -> Int? {
            var info = stat()
            return stat(file, &info) == 0 ? Int(info.st_size) : nil
        }
        let deadline = Date().addingTimeInterval(2)
        while size() == 0 {
            guard Date() < deadline else {
                throw CacheLogError.truncated(path: path, size: 0, expected: nil)
            }
            usleep(10_000)
        }
    }
}
