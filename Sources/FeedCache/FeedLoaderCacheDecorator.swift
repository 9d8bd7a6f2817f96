import Logging

/// Saves what a loader delivered from the remote end into a cache, then delivers it.
///
/// Only feeds whose source is ``FeedSource/remote`` are saved: re-saving a feed that came from
/// the cache would give stale items a fresh timestamp, and so are feeds a loader already tried
/// to save on the way (``RevalidatingFeedLoader``). A failing save does not fail the load (the
/// items are still worth showing), but the delivered feed says so in
/// ``LoadedFeed/cacheSave`` (``CacheSaveOutcome/failed(_:)``), so that no caller reports
/// unsaved items as cached; a successful save is ``CacheSaveOutcome/saved``. A task cancelled
/// while the decoratee loaded saves nothing and throws `CancellationError`.
public struct FeedLoaderCacheDecorator<Item: Sendable>: FeedLoader {
    private let decoratee: any FeedLoader<Item>
    private let cache: any FeedCaching<Item>
    private let logger: Logger?

    /// Decorates `decoratee` so that its remote feeds are saved into `cache`.
    public init(decoratee: any FeedLoader<Item>, cache: any FeedCaching<Item>, logger: Logger? = nil) {
        self.decoratee = decoratee
        self.cache = cache
        self.logger = logger
    }

    /// Delivers the decoratee's feed, saved into the cache first when it came from the remote.
    ///
    /// A save that fails does not fail the load: the feed says so in ``LoadedFeed/cacheSave``.
    ///
    /// - Throws: What the decoratee throws, unchanged; `CancellationError` when the task was
    ///   cancelled while the decoratee loaded (nothing is saved then).
    public func loadFeed() async throws -> LoadedFeed<Item> {
        let feed = try await decoratee.loadFeed()
        guard feed.source == .remote, feed.cacheSave == .notAttempted else { return feed }
        try Task.checkCancellation()
        return await LoadedFeed.remote(feed.items, revalidated: feed.revalidated, logger: logger) { try await cache.save(feed.items) }
    }
}
