import CLMDB
import FeedCache
import FeedCacheLog
import Foundation
import TestSupport
import Testing
@testable import CacheLog

/// The decoded events of the log; a corrupt record is an issue.
func decodedEvents(_ log: EventLog, includePayload: Bool = false) throws -> [RecordedEvent] {
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

    init(_ entry: LogState.Entry) { self.init(key: entry.key, seq: entry.seq, timestamp: entry.timestamp, bytes: entry.bytes) }
}

/// The state computed the slow, obvious way from the events alone, sorted like `state()`.
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
        case .retention:
            continue
        }
    }
    return live.values.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
}

/// The stored state in the same terms as ``bruteForceFold(_:)``.
func storedState(_ log: EventLog) throws -> [FoldedEntry] {
    try log.state().entries.map(FoldedEntry.init)
}

/// What the feed tests cache.
struct Item: Codable, Sendable, Equatable, Hashable {
    var id: Int
    var text: String
}

func feedLoader(_ log: EventLog, key: String = "films", clock: @escaping @Sendable () -> Date = { Date() }) -> LocalFeedLoader<Item> {
    LocalFeedLoader<Item>(store: CacheLogFeedStore(log: log, key: key), currentDate: clock)
}
