import CLMDB
import Foundation
import TestSupport
import Testing
@testable import CacheLog

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
    let closed = try await eventually { !OpenPaths.isOpen(path) }
    #expect(closed, "database at \(path) was never closed")
}

/// The raw-LMDB helpers of TestSupport, on a log's own environment and tables.
extension RawLMDB {
    static func write(_ log: CacheLog, _ body: (OpaquePointer, Databases) throws -> Void) throws {
        try write(environment: log.environment.raw) { txn in try body(txn, log.environment.dbs) }
    }

    static func dump(_ log: CacheLog, _ table: (Databases) -> MDB_dbi) throws -> [[UInt8]: [UInt8]] {
        try dump(environment: log.environment.raw, table(log.environment.dbs))
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
