import CLMDB
import Foundation
import Testing
@testable import CacheLog

/// A log's table handles as LMDB's C API takes them, for tests that write bytes beneath the engine.
public struct RawTables {
    public var events, state, checkpoints, meta: MDB_dbi
    /// The `refs` table (sorted duplicates); 0, the main table, in a read-only open of a format
    /// before it.
    public var refs: MDB_dbi

    init(_ log: EventLog) {
        let tables = log.environment.tables
        events = tables.events.handle
        state = tables.state.handle
        checkpoints = tables.checkpoints.handle
        meta = tables.meta.handle
        refs = tables.refs?.handle ?? 0
    }
}

/// The raw-LMDB helpers, on a log's own environment and tables.
extension RawLMDB {
    public static func write(_ log: EventLog, _ body: (OpaquePointer, RawTables) throws -> Void) throws {
        try write(environment: log.environment.raw) { txn in try body(txn, RawTables(log)) }
    }

    public static func dump(_ log: EventLog, _ table: (RawTables) -> MDB_dbi) throws -> [[UInt8]: [UInt8]] {
        try dump(environment: log.environment.raw, table(RawTables(log)))
    }

    /// The stored record `seq`, as bytes.
    public static func record(_ seq: UInt64, in log: EventLog) throws -> [UInt8] {
        var record: [UInt8]?
        try write(log) { txn, tables in record = get(txn, tables.events, seqKey(seq)) }
        return try #require(record)
    }

    /// Replaces the stored record `seq` with `bytes`.
    public static func replace(_ seq: UInt64, with bytes: [UInt8], in log: EventLog) throws {
        try write(log) { txn, tables in
            try #require(put(txn, tables.events, seqKey(seq), bytes) == MDB_SUCCESS)
        }
    }

    /// Flips one byte of the stored record `seq` (in the compressed body when it has one).
    public static func flipByte(of seq: UInt64, in log: EventLog, offsetFromEnd: Int = 6) throws {
        var record = try self.record(seq, in: log)
        record[record.count - offsetFromEnd] ^= 0xFF
        try replace(seq, with: record, in: log)
    }

    /// Flips the low byte of the stored record `seq`'s timestamp field (offset 19 of its header).
    /// The framing, the key and the body stay valid, so only the record's checksum can tell; a flip
    /// in a compressed body would be caught by zlib too.
    public static func flipHeaderByte(of seq: UInt64, in log: EventLog) throws {
        var record = try self.record(seq, in: log)
        record[19] ^= 0xFF
        try replace(seq, with: record, in: log)
    }

    /// A seq as the log keys it.
    public static func seqKey(_ seq: UInt64) -> [UInt8] { SeqKey.bytes(seq) }
}

/// Waits until the instance for `path` is gone, so the directory can be opened again in-process.
public func waitUntilClosed(_ path: String) async throws {
    let closed = try await eventually { !OpenPaths.isOpen(path) }
    #expect(closed, "database at \(path) was never closed")
}
