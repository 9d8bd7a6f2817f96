import Foundation

/// Where a loaded feed came from.
public enum FeedSource: Sendable, Hashable {
    /// Fresh from the remote end.
    case remote
    /// From the local cache, saved at `timestamp` (its age is the current date minus it).
    case cache(timestamp: Date)
}

/// The items a ``FeedLoader`` delivered, and where they came from.
public struct LoadedFeed<Item: Sendable>: Sendable {
    /// The items, in the order they were delivered. May be empty: an empty feed is still a feed.
    public let items: [Item]
    /// Where the items came from.
    public let source: FeedSource
    /// Whether the items were saved into a cache on their way to the caller.
    public let cacheSave: CacheSaveOutcome

    /// Creates a loaded feed; `cacheSave` says whether it was saved into a cache on the way.
    public init(items: [Item], source: FeedSource, cacheSave: CacheSaveOutcome = .notAttempted) {
        self.items = items
        self.source = source
        self.cacheSave = cacheSave
    }

    /// When the items were cached, or `nil` when they came from the remote end.
    public var cacheTimestamp: Date? {
        if case .cache(let timestamp) = source { timestamp } else { nil }
    }
}

extension LoadedFeed: Equatable where Item: Equatable {}
