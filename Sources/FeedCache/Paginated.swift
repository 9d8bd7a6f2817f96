/// A page of items that knows how to load the next one.
public struct Paginated<Item: Sendable>: Sendable {
    /// Loads the next page; its ``items`` include the items of this page.
    public typealias LoadMore = @Sendable () async throws -> Paginated<Item>

    /// Every item loaded so far, this page included.
    public let items: [Item]
    /// Loads the next page, or `nil` when this is the last one.
    public let loadMore: LoadMore?

    /// Creates a page.
    public init(items: [Item], loadMore: LoadMore? = nil) {
        self.items = items
        self.loadMore = loadMore
    }
}
