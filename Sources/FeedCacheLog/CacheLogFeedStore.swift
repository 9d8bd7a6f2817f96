import CacheLog
import FeedCache
import Foundation

/// A ``FeedStore`` that keeps one cache as one key of a ``CacheLog``: every write is an event in
/// the log, and the cache is the key's live value in the projection.
///
/// | store operation | appended to the log |
/// |---|---|
/// | `replace(with:timestamp:)` | `delete(replaced)` + `put`, as one atomic batch |
/// | `insert(_:timestamp:)` | `put` |
/// | `deleteCachedFeed(reason:)` | `delete(reason)`, only when a cache exists |
/// | `expireCachedFeed(timestamp:maxAge:)` | `expire(timestamp, maxAge)`, only when a cache exists |
///
/// Deleting or expiring an empty cache appends nothing: the log records what happened to a cache,
/// not requests that changed nothing.
public struct CacheLogFeedStore: FeedStore {
    public let log: CacheLog
    public let key: String

    /// - Parameter key: the log key of this cache, such as `films` or `search:totoro`.
    public init(log: CacheLog, key: String) {
        self.log = log
        self.key = key
    }

    public func deleteCachedFeed(reason: DeletionReason) async throws {
        guard try log.entry(key) != nil else { return }
        try await log.append(.delete(key: key, reason: reason.logReason))
    }

    public func insert(_ feed: Data, timestamp: Date) async throws {
        try await log.append(.put(key: key, payload: feed, timestamp: timestamp))
    }

    public func replace(with feed: Data, timestamp: Date) async throws {
        try await log.append([.delete(key: key, reason: .replaced), .put(key: key, payload: feed, timestamp: timestamp)])
    }

    public func expireCachedFeed(timestamp: Date, maxAge: TimeInterval) async throws {
        guard try log.entry(key) != nil else { return }
        try await log.append(.expire(key: key, timestamp: timestamp, maxAge: maxAge))
    }

    public func retrieve() async throws -> CachedFeed? {
        try log.retrieve(key).map { CachedFeed(feed: $0.payload, timestamp: $0.timestamp) }
    }
}

extension DeletionReason {
    var logReason: DeleteReason {
        switch self {
        case .explicit: return .explicit
        case .retrievalError: return .retrievalError
        }
    }
}

/// One ``CacheLogFeedStore`` per key, all in the same log: what a query-keyed search cache uses.
public struct CacheLogKeyedFeedStore: KeyedFeedStore {
    public let log: CacheLog

    public init(log: CacheLog) { self.log = log }

    public func store(for key: String) -> any FeedStore { CacheLogFeedStore(log: log, key: key) }
}
