import CLMDB
import Foundation
import Testing
@testable import CacheLog

/// A directory of its own for each test (Swift Testing runs tests in parallel), removed at the end.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("cachelog-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// A path inside the directory, for a database that does not exist yet.
    func path(_ name: String = "db") -> String { url.appendingPathComponent(name).path }
}

/// A clock the test moves by hand.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var now: Date

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { now = start }

    var date: Date {
        lock.lock(); defer { lock.unlock() }
        return now
    }

    func advance(_ seconds: TimeInterval) {
        lock.lock(); defer { lock.unlock() }
        now += seconds
    }

    var function: @Sendable () -> Date { { self.date } }
}

func makeLog(_ directory: TemporaryDirectory, clock: TestClock? = nil, mapSize: Int = 64 << 20,
             checkpointInterval: Int = 4096, readOnly: Bool = false, name: String = "db") throws -> CacheLog {
    var now: @Sendable () -> Date = { Date() }
    if let clock { now = clock.function }
    let options = CacheLog.Options(
        readOnly: readOnly, initialMapSize: mapSize, checkpointInterval: checkpointInterval, clock: now)
    return try CacheLog(path: directory.path(name), options: options)
}

func payload(_ text: String) -> Data { Data(text.utf8) }

func events(_ log: CacheLog, _ query: EventQuery = EventQuery()) throws -> [RecordedEvent] {
    try log.events(query).compactMap { item in
        if case .event(let event) = item { return event }
        return nil
    }
}

/// Waits until the instance for `path` is gone, so the directory can be opened again in-process.
func waitUntilClosed(_ path: String) async throws {
    let canonical = URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
    for _ in 0..<500 {
        if !OpenPaths.shared.withLock({ $0.contains(canonical) }) { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("database at \(path) was never closed")
}

/// Direct access to the LMDB tables underneath a log, with the C API, the way a test that plants
/// corruption or an outside reader would touch them.
enum RawLMDB {
    static func write(_ log: CacheLog, _ body: (OpaquePointer, Databases) throws -> Void) throws {
        var txn: OpaquePointer?
        try #require(mdb_txn_begin(log.environment.raw, nil, 0, &txn) == MDB_SUCCESS)
        let handle = try #require(txn)
        do {
            try body(handle, log.environment.dbs)
        } catch {
            mdb_txn_abort(handle)
            throw error
        }
        try #require(mdb_txn_commit(handle) == MDB_SUCCESS)
    }

    static func get(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: [UInt8]) -> [UInt8]? {
        var key = key
        return key.withUnsafeMutableBytes { k in
            var kv = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
            var v = MDB_val()
            guard mdb_get(txn, dbi, &kv, &v) == MDB_SUCCESS else { return nil }
            return Array(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
        }
    }

    @discardableResult
    static func put(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8]) -> Int32 {
        var key = key, value = value
        return key.withUnsafeMutableBytes { k in
            value.withUnsafeMutableBytes { v in
                var kv = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
                var vv = MDB_val(mv_size: v.count, mv_data: v.baseAddress)
                return mdb_put(txn, dbi, &kv, &vv, 0)
            }
        }
    }

    static func delete(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: [UInt8]) {
        var key = key
        key.withUnsafeMutableBytes { k in
            var kv = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
            _ = mdb_del(txn, dbi, &kv, nil)
        }
    }

    /// Every key and value of a table, copied.
    static func dump(_ log: CacheLog, _ table: (Databases) -> MDB_dbi) throws -> [[UInt8]: [UInt8]] {
        var txn: OpaquePointer?
        try #require(mdb_txn_begin(log.environment.raw, nil, UInt32(MDB_RDONLY), &txn) == MDB_SUCCESS)
        let handle = try #require(txn)
        defer { mdb_txn_abort(handle) }
        var cursor: OpaquePointer?
        try #require(mdb_cursor_open(handle, table(log.environment.dbs), &cursor) == MDB_SUCCESS)
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

    /// Flips one byte of the stored record `seq` (in the compressed body when it has one).
    static func flipByte(of seq: UInt64, in log: CacheLog, offsetFromEnd: Int = 6) throws {
        try write(log) { txn, dbs in
            var record = try #require(get(txn, dbs.events, SeqKey.bytes(seq)))
            record[record.count - offsetFromEnd] ^= 0xFF
            #expect(put(txn, dbs.events, SeqKey.bytes(seq), record) == MDB_SUCCESS)
        }
    }
}

/// The built executables sit beside the test bundle.
func builtProduct(_ name: String) throws -> URL {
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = bundle.deletingLastPathComponent()
    // On Linux the runner is `<build>/debug/<Package>PackageTests.xctest`; on Darwin it may sit inside the bundle.
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory.deleteLastPathComponent()
    }
    throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: name])
}
