/// Something that delivers a feed and says where it came from: the unit of composition.
///
/// Remote loaders, the local cache (``LocalFeedLoader``) and the composites
/// (``FeedLoaderWithFallbackComposite``, ``FeedLoaderCacheDecorator``,
/// ``FeedLoaderRetryDecorator``) all conform, so they nest freely. Wrap a closure with
/// ``AnyFeedLoader``.
public protocol FeedLoader<Item>: Sendable {
    /// The type of the feed's items.
    associatedtype Item: Sendable

    /// Delivers the feed, or throws when there is no usable feed.
    func loadFeed() async throws -> LoadedFeed<Item>
}
