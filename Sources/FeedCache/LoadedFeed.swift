#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

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
    /// True when the remote said the cached feed is still current ("not modified") and these are
    /// the cached items it vouched for (``RevalidatingFeedLoader``).
    public let revalidated: Bool
    /// Why the loader asked first failed, when these items came from its fallback: the remote's
    /// error when the cache served after the remote failed. `nil` when the first loader delivered.
    public let primaryFailure: (any Error)?

    /// Creates a loaded feed; `cacheSave` says whether it was saved into a cache on the way, and
    /// `revalidated` whether the remote vouched for cached items rather than sending them.
    public init(
        items: [Item], source: FeedSource, cacheSave: CacheSaveOutcome = .notAttempted, revalidated: Bool = false,
        primaryFailure: (any Error)? = nil
    ) {
        self.items = items
        self.source = source
        self.cacheSave = cacheSave
        self.revalidated = revalidated
        self.primaryFailure = primaryFailure
    }

    /// This feed, delivered by a fallback after the first loader failed with `error`.
    func delivered(after error: any Error) -> LoadedFeed {
        LoadedFeed(items: items, source: source, cacheSave: cacheSave, revalidated: revalidated, primaryFailure: error)
    }

    /// Remote items after `save` tried to cache them: a failed save is logged and still delivers
    /// them (they are worth showing), saying they are not cached.
    static func remote(
        _ items: [Item], revalidated: Bool = false, logger: Logger?, save: () async throws -> Void
    ) async -> LoadedFeed {
        do {
            try await save()
            return LoadedFeed(items: items, source: .remote, cacheSave: .saved, revalidated: revalidated)
        } catch let error as NewerCacheError {
            logger?.notice("Did not cache the loaded feed: a newer one was saved meanwhile", metadata: ["newer": "\(error.timestamp)"])
            return LoadedFeed(items: items, source: .remote, cacheSave: .superseded(by: error), revalidated: revalidated)
        } catch {
            logger?.warning("Could not cache the loaded feed", metadata: ["error": "\(error)"])
            return LoadedFeed(items: items, source: .remote, cacheSave: .failed(error), revalidated: revalidated)
        }
    }

    /// When the items were cached, or `nil` when they came from the remote end.
    public var cacheTimestamp: Date? {
        if case .cache(let timestamp) = source { timestamp } else { nil }
    }
}

extension LoadedFeed: Equatable where Item: Equatable {
    /// Equal items, source, save outcome and revalidation: the same feed delivered the same way.
    /// Why a first loader failed (``primaryFailure``) is a diagnostic, not part of the feed.
    public static func == (lhs: LoadedFeed, rhs: LoadedFeed) -> Bool {
        lhs.items == rhs.items && lhs.source == rhs.source && lhs.cacheSave == rhs.cacheSave && lhs.revalidated == rhs.revalidated
    }
}
