#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a resource's load delivered: the items, where they came from, when they were cached,
/// and whether they are in the cache now.
public struct CacheLoad<Item: Sendable>: Sendable {
    /// The cache key.
    public let key: String
    /// The items, in the order they were delivered.
    public let items: [Item]
    /// Where the items came from.
    public let source: FeedSource
    /// When the items were cached; for remote items that could not be saved, when they were
    /// loaded. A search merged from several pages is as old as its oldest page.
    public let timestamp: Date
    /// Whether remote items were saved (`CacheSaveOutcome/isSaved`); cached items were not
    /// saved again (`CacheSaveOutcome/notAttempted`).
    public let cacheSave: CacheSaveOutcome
    /// True when the remote said "not modified" and the items are the cache it vouched for.
    public let revalidated: Bool
    /// Why the remote was not the answer, when the cache served after the remote failed; `nil`
    /// whenever the remote answered, even after a cache-first load found no usable cache.
    public let remoteFailure: (any Error)?
    /// Whether the items are fresh under the policy that judged them: always, except for the
    /// first, cached answer of ``FeedResource/cacheThenRemote()``, which may be stale.
    public let isFresh: Bool
    /// For a search: whether the server has another page (``SearchResource/loadMore()``);
    /// `nil` for a feed.
    public let more: Bool?
    /// For a search: when each page of the list was fetched, the first page's first.
    public let pages: [Date]
    /// For a search with an object cache: the keys of objects that could not be cached (longer
    /// than the database allows), skipped so that the rest of the save could land.
    public let skippedObjects: [String]

    /// Whether the items are in the cache now: they came from it, or were saved into it.
    public var isCached: Bool {
        switch (source, cacheSave) {
        case (.cache, _), (.remote, .saved): true
        case (.remote, _): false
        }
    }

    init(
        key: String, items: [Item], source: FeedSource, timestamp: Date, cacheSave: CacheSaveOutcome, revalidated: Bool = false,
        remoteFailure: (any Error)? = nil, isFresh: Bool = true, more: Bool? = nil, pages: [Date] = [], skippedObjects: [String] = []
    ) {
        self.key = key
        self.items = items
        self.source = source
        self.timestamp = timestamp
        self.cacheSave = cacheSave
        self.revalidated = revalidated
        self.remoteFailure = remoteFailure
        self.isFresh = isFresh
        self.more = more
        self.pages = pages
        self.skippedObjects = skippedObjects
    }

    /// `loaded`, for `key`; remote items are stamped `start`, the moment the load began (what
    /// their save recorded).
    init(key: String, _ loaded: LoadedFeed<Item>, start: Date) {
        self.init(
            key: key, items: loaded.items, source: loaded.source, timestamp: loaded.cacheTimestamp ?? start,
            cacheSave: loaded.cacheSave, revalidated: loaded.revalidated, remoteFailure: Self.remoteFailure(of: loaded))
    }

    /// The remote's failure when the cache served after it; a cache-first load's first loader is
    /// the cache, whose miss says nothing about the remote.
    static func remoteFailure(of loaded: LoadedFeed<Item>) -> (any Error)? {
        guard case .cache = loaded.source else { return nil }
        return loaded.primaryFailure
    }

    /// How old the items are at `date`.
    public func age(at date: Date) -> TimeInterval { date.timeIntervalSince(timestamp) }
}
