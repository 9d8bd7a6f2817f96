import CLMDB
import FeedCache
import FeedCacheLog
import Foundation
import TestSupport
import Testing
@testable import CacheLog
@testable import cachelog_writer

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

    static func record(_ seq: UInt64, in log: CacheLog) throws -> [UInt8] {
        var record: [UInt8]?
        try write(log) { txn, dbs in record = get(txn, dbs.events, SeqKey.bytes(seq)) }
        return try #require(record)
    }

    /// Replaces the stored record `seq` with `bytes`.
    static func replace(_ seq: UInt64, with bytes: [UInt8], in log: CacheLog) throws {
        try write(log) { txn, dbs in
            try #require(put(txn, dbs.events, SeqKey.bytes(seq), bytes) == MDB_SUCCESS)
        }
    }
}

/// A deterministic generator (SplitMix64), so every random test replays the same way.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) } }
}

/// The payload `cachelog-writer --seed` sends as save `index`.
func writerPayload(seed: UInt64, index: Int, count: Int) -> Data {
    cachelog_writer.payload(seed: seed, index: index, count: count)
}

/// The decoded events of the log; a corrupt record is an issue.
func decodedEvents(_ log: CacheLog, includePayload: Bool = false) throws -> [RecordedEvent] {
    try log.events(EventQuery(includePayload: includePayload)).compactMap { item in
        switch item {
        case .event(let event): return event
        case .corrupt(let seq, let detail):
            Issue.record("corrupt record at seq \(seq): \(detail)")
            return nil
        }
    }
}

/// A live entry as the fold sees it: which put is live, cached when, how big.
struct FoldedEntry: Equatable, CustomStringConvertible {
    var key: String
    var seq: UInt64
    var timestamp: Date?
    var bytes: Int
    var description: String { "\(key)@\(seq)" }

    init(key: String, seq: UInt64, timestamp: Date?, bytes: Int) {
        self.key = key
        self.seq = seq
        self.timestamp = timestamp
        self.bytes = bytes
    }

    init(_ entry: LiveEntry) { self.init(key: entry.key, seq: entry.seq, timestamp: entry.timestamp, bytes: entry.bytes) }
}

/// The projection computed the slow, obvious way from the events alone, sorted like `state()`.
func bruteForceFold(_ events: [RecordedEvent]) -> [FoldedEntry] {
    var live: [String: FoldedEntry] = [:]
    for event in events {
        switch event.kind {
        case .put:
            live[event.key] = FoldedEntry(key: event.key, seq: event.seq, timestamp: event.timestamp, bytes: event.payloadBytes)
        case .delete:
            live[event.key] = nil
        case .expire:
            if live[event.key]?.timestamp == event.timestamp { live[event.key] = nil }
        }
    }
    return live.values.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
}

/// The stored projection in the same terms as ``bruteForceFold(_:)``.
func storedState(_ log: CacheLog) throws -> [FoldedEntry] {
    try log.state().entries.map(FoldedEntry.init)
}

/// What the feed tests cache.
struct Item: Codable, Sendable, Equatable, Hashable {
    var id: Int
    var text: String
}

func feedLoader(_ log: CacheLog, key: String = "films", clock: @escaping @Sendable () -> Date = { Date() }) -> LocalFeedLoader<Item> {
    LocalFeedLoader<Item>(store: CacheLogFeedStore(log: log, key: key), currentDate: clock)
}
