#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A feed as a ``FeedStore`` keeps it: the encoded payload and the moment it was saved.
///
/// The payload is opaque to the store; only ``LocalFeedLoader`` knows how to decode it.
public struct CachedFeed: Sendable, Equatable {
    /// The encoded feed, exactly as it was handed to the store.
    public let feed: Data
    /// When the feed was saved, according to the clock of the loader that saved it.
    public let timestamp: Date
    /// The policy it was saved under, or `nil` when the saver recorded none.
    public let policy: RecordedPolicy?
    /// What the remote gave to ask it later whether the feed changed; ``CacheValidators/none``
    /// when it gave nothing (or the saver kept nothing).
    public let validators: CacheValidators
    /// When the store recorded the save, for a store that knows (an event log does); `nil` when
    /// it does not.
    public let recordedAt: Date?

    /// Creates a cached feed from its payload, the moment it was saved, its policy, if recorded,
    /// the remote's validators, if any, and when the store recorded the save, if it knows.
    public init(
        feed: Data, timestamp: Date, policy: RecordedPolicy? = nil, validators: CacheValidators = .none, recordedAt: Date? = nil
    ) {
        self.feed = feed
        self.timestamp = timestamp
        self.policy = policy
        self.validators = validators
        self.recordedAt = recordedAt
    }

    /// The moment the cache's age is counted from (``CachePolicy/trustedTimestamp(_:recordedAt:)``).
    public var trustedTimestamp: Date { CachePolicy.trustedTimestamp(timestamp, recordedAt: recordedAt) }
}
