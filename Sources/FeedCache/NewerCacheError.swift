#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Thrown by a ``FeedStore`` that refuses to replace a cache with an older one: the live cache
/// was saved at `timestamp`, later than the save that was refused.
///
/// Two tasks or processes that load the same feed at once both save it; whichever commits last
/// would otherwise win, even when it began (and was stamped) first. A store that can compare the
/// stamps where it commits refuses the older save instead; ``LocalFeedLoader`` users see it as
/// ``CacheSaveOutcome/superseded(by:)``.
public struct NewerCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// When the cache that stays was saved.
    public let timestamp: Date

    /// The error for a save refused because the live cache was saved at `timestamp`.
    public init(timestamp: Date) {
        self.timestamp = timestamp
    }

    /// Says why nothing was saved, as a clause (it follows "not cached: " in the tool's messages).
    public var description: String {
        "a newer cache, saved at \(TimestampText.string(timestamp)), was kept: an older feed never replaces it"
    }
}
