/// A page of items that knows how to load the next one.
public struct Paginated<Item: Sendable>: Sendable {
    /// Loads the next page; its ``items`` include the items of this page.
    public typealias LoadMore = @Sendable () async throws -> Paginated<Item>

    /// Every item loaded so far, this page included.
    public let items: [Item]
    /// Whether ``items`` were saved into a cache on their way to the caller.
    public let cacheSave: CacheSaveOutcome
    /// Loads the next page, or `nil` when this is the last one.
    public let loadMore: LoadMore?

    /// Creates a page.
    public init(items: [Item], cacheSave: CacheSaveOutcome = .notAttempted, loadMore: LoadMore? = nil) {
        self.items = items
        self.cacheSave = cacheSave
        self.loadMore = loadMore
    }
}
