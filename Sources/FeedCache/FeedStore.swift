#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a ``LocalFeedLoader`` keeps one cached feed.
///
/// A store holds at most one ``CachedFeed``. It knows nothing about what the payload means or
/// how old is too old: those decisions belong to ``LocalFeedLoader`` and ``CachePolicy``.
///
/// Every method is one operation on the store, and a store applies its operations one at a
/// time (serially), whatever the number of tasks calling it. A store that keeps a history
/// (an event log) records each write method as the event named in its documentation.
///
/// The `FeedStoreSpecs` test suite describes this contract as runnable specs; every
/// implementation should pass it.
public protocol FeedStore: Sendable {
    /// Removes the cached feed, if any. Deleting an empty cache succeeds and changes nothing.
    ///
    /// Event: `delete(reason)`.
    /// - Parameter reason: why the cache is being removed, recorded by stores that keep history.
    func deleteCachedFeed(reason: DeletionReason) async throws

    /// Stores `feed` saved at `timestamp` under `policy` with the remote's `validators`,
    /// overriding any feed stored before.
    ///
    /// Event: `put(feed, timestamp, policy, validators)`. ``retrieve()`` delivers `policy` and
    /// `validators` with the feed. This is what ``LocalFeedLoader/refresh(validators:askedWith:)`` uses: a
    /// store that keeps history records the refresh of an unchanged feed as one put.
    func insert(_ feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) async throws

    /// Deletes the old cache and inserts the new one **atomically**: no reader ever sees the
    /// store empty in between, and if the operation fails the old cache is still there.
    ///
    /// This is what ``LocalFeedLoader/save(_:)`` uses. A store backed by an event log
    /// writes it as one atomic append of `delete(reason: replaced)` +
    /// `put(feed, timestamp, policy, validators)`.
    func replace(with feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) async throws

    /// Removes the cached feed because it is too old.
    ///
    /// Event: `expire(timestamp, maxAge)`. Distinct from a deletion so that a history can
    /// answer "why was the cache gone?": it records which cache was judged and by what rule.
    /// Expiring an empty cache succeeds and changes nothing.
    /// - Parameters:
    ///   - timestamp: the timestamp of the cache that was judged too old.
    ///   - maxAge: the maximum age, in seconds, of the ``CachePolicy`` that judged it.
    func expireCachedFeed(timestamp: Date, maxAge: TimeInterval) async throws

    /// Delivers the cached feed, or `nil` when the cache is empty. Has no side effects.
    ///
    /// Throws when the cache exists but cannot be read back (for example a corrupt record).
    func retrieve() async throws -> CachedFeed?

    /// How the last cache ended, when the store is empty and keeps the history that says so;
    /// `nil` otherwise (the default: a store that keeps no history cannot tell). Has no side effects.
    func ending() async throws -> CacheEnding?
}

extension FeedStore {
    /// A store that keeps no history cannot tell how its last cache ended.
    ///
    /// - Returns: `nil`, always.
    public func ending() async throws -> CacheEnding? { nil }

    /// Removes the cached feed, if any, for an ``DeletionReason/explicit`` reason.
    ///
    /// - Throws: What the store's ``FeedStore/deleteCachedFeed(reason:)`` throws.
    public func deleteCachedFeed() async throws {
        try await deleteCachedFeed(reason: .explicit)
    }

    /// Stores `feed` saved at `timestamp` under `policy`, with no validators.
    ///
    /// - Throws: What the store's ``FeedStore/insert(_:timestamp:policy:validators:)`` throws.
    public func insert(_ feed: Data, timestamp: Date, policy: RecordedPolicy? = nil) async throws {
        try await insert(feed, timestamp: timestamp, policy: policy, validators: .none)
    }

    /// Replaces the cache with `feed` saved at `timestamp` under `policy`, with no validators.
    ///
    /// - Throws: What the store's ``FeedStore/replace(with:timestamp:policy:validators:)`` throws.
    public func replace(with feed: Data, timestamp: Date, policy: RecordedPolicy? = nil) async throws {
        try await replace(with: feed, timestamp: timestamp, policy: policy, validators: .none)
    }
}
