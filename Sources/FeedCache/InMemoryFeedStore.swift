#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A ``FeedStore`` that keeps the cache in memory and remembers every operation it received.
///
/// Useful in an app's tests and previews: it behaves like a real store (operations are applied
/// one at a time, ``replace(with:timestamp:policy:validators:)`` is atomic) and ``operations`` tells in which
/// order the use cases talked to it.
public actor InMemoryFeedStore: FeedStore {
    /// One operation received by the store, in the words of the ``FeedStore`` protocol.
    public enum Operation: Sendable, Equatable {
        /// ``FeedStore/retrieve()``
        case retrieve
        /// ``FeedStore/insert(_:timestamp:policy:validators:)``
        case insert(Data, timestamp: Date, policy: RecordedPolicy? = nil, validators: CacheValidators = .none)
        /// ``FeedStore/replace(with:timestamp:policy:validators:)``
        case replace(Data, timestamp: Date, policy: RecordedPolicy? = nil, validators: CacheValidators = .none)
        /// ``FeedStore/deleteCachedFeed(reason:)``
        case delete(reason: DeletionReason)
        /// ``FeedStore/expireCachedFeed(timestamp:maxAge:)``
        case expire(timestamp: Date, maxAge: TimeInterval)
    }

    /// Every operation received so far, oldest first.
    public private(set) var operations: [Operation] = []

    /// The feed currently cached, read without recording an operation.
    public private(set) var cachedFeed: CachedFeed?

    /// Creates a store, empty unless `cachedFeed` is given.
    public init(cachedFeed: CachedFeed? = nil) {
        self.cachedFeed = cachedFeed
    }

    public func deleteCachedFeed(reason: DeletionReason) {
        operations.append(.delete(reason: reason))
        cachedFeed = nil
    }

    public func insert(_ feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) {
        operations.append(.insert(feed, timestamp: timestamp, policy: policy, validators: validators))
        cachedFeed = CachedFeed(feed: feed, timestamp: timestamp, policy: policy, validators: validators)
    }

    public func replace(with feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) {
        operations.append(.replace(feed, timestamp: timestamp, policy: policy, validators: validators))
        cachedFeed = CachedFeed(feed: feed, timestamp: timestamp, policy: policy, validators: validators)
    }

    public func expireCachedFeed(timestamp: Date, maxAge: TimeInterval) {
        operations.append(.expire(timestamp: timestamp, maxAge: maxAge))
        cachedFeed = nil
    }

    public func retrieve() -> CachedFeed? {
        operations.append(.retrieve)
        return cachedFeed
    }
}
