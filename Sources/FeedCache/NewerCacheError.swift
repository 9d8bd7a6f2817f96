#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Thrown by a ``FeedStore`` that refuses to replace a newer cache with an older one: the live
/// cache, stamped `timestamp`, was saved while the refused save's feed was loading, by a load that
/// the store counts as newer.
///
/// Two tasks or processes that load the same feed at once both save it; whichever commits last
/// would otherwise win, even when its load began first. A store that can tell, where it commits,
/// which load began first refuses the older save instead; ``LocalFeedLoader`` users see it as
/// ``CacheSaveOutcome/superseded(by:)``. An event log tells by its own order (how far the log had
/// got when each load began), which every process shares, and not by the timestamps: the clocks
/// that took them may disagree, so the newer cache may well be stamped earlier.
public struct NewerCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The timestamp of the cache that stays.
    public let timestamp: Date

    /// The error for a save refused because the live cache, stamped `timestamp`, is newer.
    public init(timestamp: Date) {
        self.timestamp = timestamp
    }

    /// Says why nothing was saved, as a clause (it follows "not cached: " in the tool's messages).
    public var description: String {
        "a newer cache (stamped \(TimestampText.string(timestamp))) was saved during this load, and was kept"
    }
}
