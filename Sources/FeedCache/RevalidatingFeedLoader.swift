import Logging

/// Loads a feed from a remote that can answer "not modified" (HTTP revalidation), keeping its
/// cache current either way.
///
/// The remote is asked with the validators of the cached feed (none when the cache is empty or
/// cannot be read, so that the remote sends the whole feed):
/// - ``ConditionalFeed/modified(_:_:)``: the items are saved with their new validators, as
///   ``FeedLoaderCacheDecorator`` saves them;
/// - ``ConditionalFeed/notModified(_:)``: the cached feed is saved again, timestamped now
///   (``LocalFeedLoader/refresh(validators:askedWith:)``), and delivered as ``FeedSource/remote`` with
///   ``LoadedFeed/revalidated`` set: the remote vouched for it, so an expired cache is fresh again.
///
/// Either way the feed is delivered already saved, so a ``FeedLoaderCacheDecorator`` around this
/// loader (as ``CacheStrategy/compose(remote:cache:logger:)`` puts it) leaves it alone.
public struct RevalidatingFeedLoader<Item: Sendable>: FeedLoader {
    /// Asks the remote for the feed, conditionally on the validators given (when any).
    public typealias Remote = @Sendable (CacheValidators) async throws -> ConditionalFeed<Item>

    private let remote: Remote
    private let cache: LocalFeedLoader<Item>
    private let logger: Logger?

    /// Loads from `remote`, asking with and saving into `cache`.
    public init(remote: @escaping Remote, cache: LocalFeedLoader<Item>, logger: Logger? = nil) {
        self.remote = remote
        self.cache = cache
        self.logger = logger
    }

    /// Delivers the remote's feed, saved.
    ///
    /// A save that fails does not fail the load: the feed says so in ``LoadedFeed/cacheSave``.
    ///
    /// - Throws: The remote's error, unchanged; ``NotModifiedError`` when the remote said "not
    ///   modified" and nothing cached can be refreshed; `CancellationError` when the task was
    ///   cancelled while the remote answered.
    public func loadFeed() async throws -> LoadedFeed<Item> {
        let asked = await cache.revalidationValidators()
        let answer = try await remote(asked)
        try Task.checkCancellation()
        switch answer {
        case let .modified(items, validators):
            return await LoadedFeed.remote(items, logger: logger) { try await cache.save(items, validators: validators) }
        case let .notModified(validators):
            return try await cache.refresh(validators: validators, askedWith: asked)
        }
    }
}
