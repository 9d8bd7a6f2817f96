import Logging

/// Searches the remote end page by page and caches, for each query, every result loaded so far.
///
/// The first page replaces the query's cache; each "load more" caches the merged list (all pages
/// so far) under the same query key. A failing save does not fail the load; it is logged as a
/// warning and the page says so in ``Paginated/cacheSave``. Falling back to the cache when the remote fails is left to the composer, through
/// ``LocalSearchLoader/loader(for:)``.
public struct PaginatedSearchLoader<Item: Codable & Sendable, Page: Sendable>: Sendable {
    /// Fetches one page of results for a query: `page` is `nil` for the first page, then the
    /// `next` value of the previous page. A `nil` `next` means this was the last page.
    public typealias RemotePage = @Sendable (_ query: String, _ page: Page?) async throws -> (items: [Item], next: Page?)

    private let remote: RemotePage
    private let cache: LocalSearchLoader<Item>
    private let logger: Logger?

    /// Creates a loader fetching pages with `remote` and caching them into `cache`.
    public init(remote: @escaping RemotePage, cache: LocalSearchLoader<Item>, logger: Logger? = nil) {
        self.remote = remote
        self.cache = cache
        self.logger = logger
    }

    /// Loads the first page of results for `query`.
    public func load(query: String) async throws -> Paginated<Item> {
        try await loadPage(page: nil, after: [], query: query)
    }

    private func loadPage(page: Page?, after previous: [Item], query: String) async throws -> Paginated<Item> {
        let (items, next) = try await remote(query, page)
        let merged = previous + items
        let saved: CacheSaveOutcome
        do {
            try await cache.save(merged, for: query)
            saved = .saved
        } catch {
            logger?.warning("Could not cache search results", metadata: ["query": "\(query)", "error": "\(error)"])
            saved = .failed(error)
        }
        guard let next else { return Paginated(items: merged, cacheSave: saved) }
        return Paginated(items: merged, cacheSave: saved) {
            try await loadPage(page: next, after: merged, query: query)
        }
    }
}
