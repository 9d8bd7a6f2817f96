/// Something that keeps a feed for later: what ``FeedLoaderCacheDecorator`` saves into.
public protocol FeedCaching<Item>: Sendable {
    /// The type of the feed's items.
    associatedtype Item: Sendable

    /// Saves `items` as the cached feed.
    func save(_ items: [Item]) async throws
}
