import Logging

/// How a remote loader and its cache are composed: which one is asked first.
///
/// Both save what the remote delivers (``FeedLoaderCacheDecorator``) and fall back to the other
/// side when the first fails (``FeedLoaderWithFallbackComposite``); both deliver a cached feed
/// only while its policy holds it fresh.
public enum CacheStrategy: String, Sendable, Hashable, CaseIterable {
    /// The remote first; the cache when the remote fails (the feed apps: "Given the customer
    /// doesn't have connectivity … the app should display the latest saved feed").
    case remoteFirst = "remote-first"
    /// A fresh cache first, with no request at all; the remote when the cache is empty, expired
    /// or unreadable (the genres app: "Given the client has connectivity and there's a cached
    /// version … less than 7 days old … the app should display the latest cached genres list").
    case cacheFirst = "cache-first"
    /// The cache alone, never the remote (an app offline by choice, or a preview that must not
    /// wait for the network): a fresh cache, else the cache's error.
    case cacheOnly = "cache-only"

    /// `remote` and `cache` composed by this strategy.
    ///
    /// When both sides fail, the error is a ``NoUsableFeedError`` whose primary error is the
    /// side asked first: the remote's for ``remoteFirst``, the cache's for ``cacheFirst``;
    /// ``cacheOnly`` throws the cache's own error.
    ///
    /// The cache is usually a ``LocalFeedLoader``; anything that loads a cached feed and saves
    /// one will do (a search saves its pages' cursor and objects with its items).
    public func compose<Cache: FeedLoader & FeedCaching>(
        remote: any FeedLoader<Cache.Item>, cache: Cache, logger: Logger? = nil
    ) -> any FeedLoader<Cache.Item> {
        let remoteThenSave = FeedLoaderCacheDecorator(decoratee: remote, cache: cache, logger: logger)
        return switch self {
        case .remoteFirst: FeedLoaderWithFallbackComposite(primary: remoteThenSave, fallback: cache)
        case .cacheFirst:
            FeedLoaderWithFallbackComposite(primary: cache, fallback: RemoteThenCacheSavedMeanwhile(remote: remoteThenSave, cache: cache))
        case .cacheOnly: cache
        }
    }
}

/// The remote, then, when it fails, the cache once more: the cache had nothing fresh when a
/// cache-first load asked it, but another process may have saved the key while the request ran.
/// Served then, the feed carries the remote's failure, as the cache's answer after a remote-first
/// request does; when the cache still has nothing, the remote's error is the one thrown.
private struct RemoteThenCacheSavedMeanwhile<Item: Sendable>: FeedLoader {
    let remote: any FeedLoader<Item>
    let cache: any FeedLoader<Item>

    func loadFeed() async throws -> LoadedFeed<Item> {
        do {
            return try await remote.loadFeed()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            try Task.checkCancellation()
            guard let saved = try? await cache.loadFeed() else { throw error }
            return saved.delivered(after: error)
        }
    }
}
