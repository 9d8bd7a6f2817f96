#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A ``FeedStore`` decorator that records every write asked of it and, unless it is a dry run,
/// passes the write on. Reads always go to the decoratee.
///
/// It lets a caller say what a use case did, or in a dry run would have done, without knowing
/// the use case's rules: run ``LocalFeedLoader/validateCache()`` over a dry-run store, and
/// ``writes`` lists the expire or delete that validation would append, while nothing is written.
public actor RecordingFeedStore: FeedStore {
    /// One write, as the use case asked for it.
    public enum Write: Sendable, Equatable {
        /// ``FeedStore/deleteCachedFeed(reason:)``.
        case delete(reason: DeletionReason)
        /// ``FeedStore/insert(_:timestamp:policy:)``, by the timestamp it was given.
        case insert(timestamp: Date)
        /// ``FeedStore/replace(with:timestamp:policy:)``, by the timestamp it was given.
        case replace(timestamp: Date)
        /// ``FeedStore/expireCachedFeed(timestamp:maxAge:)``.
        case expire(timestamp: Date, maxAge: TimeInterval)
    }

    private let decoratee: any FeedStore
    private let dryRun: Bool
    /// The writes asked for, in order: done, or (in a dry run) only planned.
    public private(set) var writes: [Write] = []

    /// Records the writes asked of `decoratee` and passes them on unless `dryRun`.
    /// - Parameters:
    ///   - decoratee: the store that reads always go to, and writes too unless `dryRun`.
    ///   - dryRun: when true, writes are recorded and not passed on.
    public init(_ decoratee: any FeedStore, dryRun: Bool) {
        self.decoratee = decoratee
        self.dryRun = dryRun
    }

    /// Records a delete for `reason`, and passes it on unless this is a dry run.
    ///
    /// - Throws: What the decoratee's delete throws; nothing in a dry run.
    public func deleteCachedFeed(reason: DeletionReason) async throws {
        if !dryRun { try await decoratee.deleteCachedFeed(reason: reason) }
        writes.append(.delete(reason: reason))
    }

    /// Records an insert by its `timestamp`, and passes it on unless this is a dry run.
    ///
    /// - Throws: What the decoratee's insert throws (nothing is recorded then); nothing in a
    ///   dry run.
    public func insert(_ feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) async throws {
        if !dryRun { try await decoratee.insert(feed, timestamp: timestamp, policy: policy, validators: validators) }
        writes.append(.insert(timestamp: timestamp))
    }

    /// Records a replace by its `timestamp`, and passes it on unless this is a dry run.
    ///
    /// - Throws: What the decoratee's replace throws (nothing is recorded then); nothing in a
    ///   dry run.
    public func replace(with feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) async throws {
        if !dryRun { try await decoratee.replace(with: feed, timestamp: timestamp, policy: policy, validators: validators) }
        writes.append(.replace(timestamp: timestamp))
    }

    /// Records an expire, and passes it on unless this is a dry run.
    ///
    /// - Throws: What the decoratee's expire throws (nothing is recorded then); nothing in a
    ///   dry run.
    public func expireCachedFeed(timestamp: Date, maxAge: TimeInterval) async throws {
        if !dryRun { try await decoratee.expireCachedFeed(timestamp: timestamp, maxAge: maxAge) }
        writes.append(.expire(timestamp: timestamp, maxAge: maxAge))
    }

    /// The decoratee's cached feed: a read, so it always goes to the decoratee.
    ///
    /// - Throws: What the decoratee's retrieve throws.
    public func retrieve() async throws -> CachedFeed? {
        try await decoratee.retrieve()
    }

    /// How the decoratee's last cache ended: a read, so it always goes to the decoratee.
    ///
    /// - Throws: What the decoratee's ``FeedStore/ending()`` throws.
    public func ending() async throws -> CacheEnding? {
        try await decoratee.ending()
    }
}
