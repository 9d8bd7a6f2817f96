import CPath
import FeedAPI
import Foundation
import GRDB

/// The hand-written C path (Sources/CPath), one LMDB environment. Use it from one task at a time
/// (its retrieve buffer is shared), as LMDB's write transactions require anyway.
public final class CPathStore: @unchecked Sendable {
    let db: OpaquePointer
    private var buffer: [UInt8]

    /// `indexed`: maintain the key index as CacheLog does (the default, so that the comparison is
    /// like for like); false measures what the index costs.
    public init(path: String, synced: Bool, mapSize: Int = 1 << 30, maxPayload: Int = 1 << 20, indexed: Bool = true) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard let db = cpath_open(path, synced ? 0 : 1, mapSize, indexed ? 1 : 0) else { throw BenchError("cpath_open failed at \(path)") }
        self.db = db
        buffer = [UInt8](repeating: 0, count: maxPayload)
    }

    deinit { cpath_close(db) }

    public func save(_ key: String, _ payload: Data, timestamp: Double, recordedAt: Double) throws {
        let rc = key.withCString { k in
            payload.withUnsafeBytes { p in
                cpath_save(db, k, strlen(k), p.baseAddress, p.count, timestamp, recordedAt)
            }
        }
        guard rc == 0 else { throw BenchError("cpath_save: \(rc)") }
    }

    public func put(_ key: String, _ payload: Data, timestamp: Double, recordedAt: Double) throws {
        let rc = key.withCString { k in
            payload.withUnsafeBytes { p in
                cpath_put(db, k, strlen(k), p.baseAddress, p.count, timestamp, recordedAt)
            }
        }
        guard rc == 0 else { throw BenchError("cpath_put: \(rc)") }
    }

    /// Retrieves into a reused buffer; returns the payload length.
    @discardableResult
    public func retrieve(_ key: String) throws -> Int {
        var timestamp = 0.0
        let count = buffer.count
        let length = key.withCString { k in
            buffer.withUnsafeMutableBytes { out in
                cpath_retrieve(db, k, strlen(k), out.baseAddress, count, &timestamp)
            }
        }
        guard length >= 0 else { throw BenchError("cpath_retrieve failed for \(key)") }
        return length
    }

    /// `count` puts of `payloads` (cycled) under `keys` (cycled), in one write transaction.
    public func putMany(keys: [String], payloads: [Data], count: Int, timestamp: Double, recordedAt: Double) throws {
        let keyBytes = keys.map { Array($0.utf8) }
        let rc = withPointers(keyBytes.map { Data($0) }) { keyPointers in
            withPointers(payloads) { payloadPointers in
                var keyList: [UnsafePointer<CChar>?] = []
                var keyLengths: [Int] = []
                var payloadList: [UnsafeRawPointer?] = []
                var payloadLengths: [Int] = []
                for index in 0..<count {
                    keyList.append(keyPointers[index % keys.count].assumingMemoryBound(to: CChar.self))
                    keyLengths.append(keyBytes[index % keys.count].count)
                    payloadList.append(payloadPointers[index % payloads.count])
                    payloadLengths.append(payloads[index % payloads.count].count)
                }
                return cpath_put_many(db, keyList, keyLengths, payloadList, payloadLengths, count, timestamp, recordedAt)
            }
        }
        guard rc == 0 else { throw BenchError("cpath_put_many: \(rc)") }
    }

    /// LMDB's compacting copy of the database at `source` into the new directory `target`.
    public static func compactCopy(from source: String, to target: String) throws {
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        guard cpath_copy_compact(source, target) == 0 else { throw BenchError("compacting copy of \(source) failed") }
    }

    public func sync() throws {
        guard cpath_sync(db) == 0 else { throw BenchError("cpath_sync failed") }
    }

    /// Events folded and live keys.
    public func fold(verifyChecksums: Bool = true) -> (events: Int, liveKeys: Int) {
        var live = 0
        let events = cpath_fold(db, verifyChecksums ? 1 : 0, &live)
        return (events, live)
    }
}

/// The JSON file store the original apps used (EssentialFeed's CodableFeedStore): the whole cache
/// as one Codable value, JSONEncoder, written whole; read + JSONDecoder.
public struct JSONFileStore: Sendable {
    struct Cache: Codable {
        var feed: [Film]
        var timestamp: Date
    }

    /// How a save reaches the disk.
    public enum Durability: Sendable {
        /// Crash-safe the POSIX way: temporary file, fsync, rename, fsync of the directory.
        case fsync
        /// `Data.write(to:options: .atomic)`, as the apps did: on Linux it fsyncs the file
        /// (strace: one `fsync` per write), not the directory.
        case atomic
        /// Temporary file, rename, no flush: what an unsynced store is compared with.
        case noFlush
    }

    public let url: URL
    public let durability: Durability

    public init(directory: String, durability: Durability) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        url = URL(fileURLWithPath: directory).appendingPathComponent("feed.json")
        self.durability = durability
    }

    public init(directory: String, durable: Bool) throws {
        try self.init(directory: directory, durability: durable ? .fsync : .atomic)
    }

    public func save(_ films: [Film], timestamp: Date) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(Cache(feed: films, timestamp: timestamp))
        switch durability {
        case .fsync: try Self.store(data, at: url, flushing: true)
        case .atomic: try data.write(to: url, options: .atomic)
        case .noFlush: try Self.store(data, at: url, flushing: false)
        }
    }

    public func load() throws -> (films: [Film], timestamp: Date) {
        let cache = try JSONDecoder().decode(Cache.self, from: Data(contentsOf: url))
        return (cache.feed, cache.timestamp)
    }

    /// The file's bytes.
    public func fileBytes() -> Int { fileSize(url.path) }

    static func store(_ data: Data, at url: URL, flushing: Bool) throws {
        let temporary = url.path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw BenchError("open \(temporary): errno \(errno)") }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == data.count, !flushing || fsync(fd) == 0 else { close(fd); throw BenchError("write/fsync failed") }
        close(fd)
        guard rename(temporary, url.path) == 0 else { throw BenchError("rename failed") }
        guard flushing else { return }
        let dir = open(url.deletingLastPathComponent().path, O_RDONLY)
        defer { close(dir) }
        guard dir >= 0, fsync(dir) == 0 else { throw BenchError("fsync of the directory failed") }
    }
}

/// SQLite's `synchronous` setting, as `PRAGMA synchronous` reports it.
public enum SQLiteSynchronous: Int, Sendable, CustomStringConvertible {
    /// No sync at all: a power cut may corrupt the database.
    case off = 0
    /// In WAL mode, syncs at checkpoints only: a power cut may lose the last commits.
    case normal = 1
    /// In WAL mode, every commit syncs the WAL before it returns.
    case full = 2

    public var description: String {
        switch self {
        case .off: "OFF"
        case .normal: "NORMAL"
        case .full: "FULL"
        }
    }
}

/// SQLite through GRDB, one row per cache key (key, JSON payload, timestamp), one connection
/// (`DatabaseQueue`), journal_mode = WAL, with the `synchronous` given (FULL by default: every
/// commit fsyncs the WAL before it returns). The pragmas are read back after the open, and a
/// store that does not have them refuses to be measured.
public final class SQLiteStore: Sendable {
    let queue: DatabaseQueue
    public let synchronous: SQLiteSynchronous

    public init(path: String, synchronous: SQLiteSynchronous = .full) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        self.synchronous = synchronous
        var configuration = Configuration()
        // Writers in other processes (the N-process rows) wait for the WAL's lock, as SQLite's
        // busy handler does, instead of failing at once.
        configuration.busyMode = .timeout(60)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
        }
        queue = try DatabaseQueue(path: path + "/cache.sqlite", configuration: configuration)
        try queue.write { db in try SQLiteTable.create(db) }
        try queue.inDatabase { db in try SQLiteTable.assertPragmas(db, synchronous: synchronous) }
    }

    public func save(_ key: String, payload: Data, timestamp: Date) throws {
        try queue.write { db in try SQLiteTable.save(db, key: key, payload: payload, timestamp: timestamp) }
    }

    public func load(_ key: String) throws -> (payload: Data, timestamp: Date)? {
        try queue.read { db in try SQLiteTable.load(db, key: key) }
    }

    public func save(_ films: [Film], key: String, timestamp: Date) throws {
        try save(key, payload: Feeds.payload(films), timestamp: timestamp)
    }

    public func loadFilms(_ key: String) throws -> [Film] {
        guard let (payload, _) = try load(key) else { return [] }
        return try JSONDecoder().decode([Film].self, from: payload)
    }

    /// SQLite's own compaction of the write-ahead log: copies it into the database file and
    /// truncates it (`wal_checkpoint(TRUNCATE)`).
    public func checkpoint() throws {
        try queue.writeWithoutTransaction { db in _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// The bytes of the database file and its write-ahead log (not `-shm`, the readers' shared
    /// memory, as `lock.mdb` is not counted for LMDB).
    public func fileBytes() -> Int {
        fileSize(queue.path) + fileSize(queue.path + "-wal")
    }

    /// The payload bytes the table holds.
    public func recordBytes() throws -> Int {
        try queue.read { db in try Int.fetchOne(db, sql: "SELECT coalesce(sum(length(key) + length(payload) + 8), 0) FROM cache") ?? 0 }
    }
}

/// SQLite through GRDB's `DatabasePool`, the configuration GRDB recommends for concurrent use:
/// WAL, one writer connection that serializes writes, readers beside it. The pool sets
/// `synchronous = NORMAL` on its writer after `prepareDatabase` runs, so the setting wanted is
/// applied on the writer afterwards and read back: FULL by default, the durability of a synced
/// CacheLog save.
public final class SQLitePoolStore: Sendable {
    let pool: DatabasePool

    public init(path: String, synchronous: SQLiteSynchronous = .full) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        pool = try DatabasePool(path: path + "/cache.sqlite")
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            try SQLiteTable.create(db)
            try SQLiteTable.assertPragmas(db, synchronous: synchronous)
        }
    }

    /// One durable write, awaited without blocking a thread of the cooperative pool.
    public func save(_ key: String, payload: Data, timestamp: Date) async throws {
        try await pool.write { db in try SQLiteTable.save(db, key: key, payload: payload, timestamp: timestamp) }
    }

    public func load(_ key: String) async throws -> Data? {
        try await pool.read { db in try SQLiteTable.load(db, key: key)?.payload }
    }
}

/// The cache table the SQLite stores share.
enum SQLiteTable {
    static func create(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY NOT NULL, payload BLOB NOT NULL, timestamp REAL NOT NULL)")
    }

    static func save(_ db: Database, key: String, payload: Data, timestamp: Date) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO cache (key, payload, timestamp) VALUES (?, ?, ?)",
            arguments: [key, payload, timestamp.timeIntervalSince1970])
    }

    static func load(_ db: Database, key: String) throws -> (payload: Data, timestamp: Date)? {
        guard let row = try Row.fetchOne(db, sql: "SELECT payload, timestamp FROM cache WHERE key = ?", arguments: [key]) else { return nil }
        let payload: Data = row["payload"]
        let seconds: Double = row["timestamp"]
        return (payload, Date(timeIntervalSince1970: seconds))
    }

    /// A baseline measured at another durability than it claims would make its row a lie.
    static func assertPragmas(_ db: Database, synchronous: SQLiteSynchronous) throws {
        let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode")
        let sync = try Int.fetchOne(db, sql: "PRAGMA synchronous")
        guard mode?.lowercased() == "wal", sync == synchronous.rawValue else {
            throw BenchError("SQLite opened with journal_mode=\(mode ?? "?"), synchronous=\(sync.map(String.init) ?? "?"); wanted WAL, \(synchronous)")
        }
    }
}

/// The bytes of the file at `path` (its length; 0 when there is none).
public func fileSize(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
}

/// Compressed size of `payload` at `level` (libdeflate, a zlib stream, as the engine makes it).
public func zlibCompressedSize(_ payload: Data, level: Int32) -> Int {
    payload.withUnsafeBytes { cpath_compressed_size($0.baseAddress, $0.count, level) }
}

/// libdeflate at `level` on `payload` (a zlib stream, then inflated, as the engine does), `rounds`
/// times each: the compressed size and the seconds of one compress and one inflate.
public func zlibRoundTrip(_ payload: Data, level: Int32, rounds: Int) throws -> (size: Int, compress: Double, inflate: Double) {
    var compress = 0.0, inflate = 0.0
    let size = payload.withUnsafeBytes { cpath_zlib_round_trips($0.baseAddress, $0.count, level, Int32(rounds), &compress, &inflate) }
    guard size > 0 else { throw BenchError("zlib failed at level \(level)") }
    return (size, compress, inflate)
}

public struct BenchError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs `body` with a stable base address for each of `buffers` (all valid during the call).
private func withPointers<T>(_ buffers: [Data], _ body: ([UnsafeRawPointer]) throws -> T) rethrows -> T {
    var copies = buffers.map { buffer -> UnsafeMutableRawPointer in
        let copy = UnsafeMutableRawPointer.allocate(byteCount: max(buffer.count, 1), alignment: 1)
        buffer.withUnsafeBytes { if let base = $0.baseAddress { copy.copyMemory(from: base, byteCount: $0.count) } }
        return copy
    }
    defer { copies.forEach { $0.deallocate() }; copies.removeAll() }
    return try body(copies.map { UnsafeRawPointer($0) })
}
