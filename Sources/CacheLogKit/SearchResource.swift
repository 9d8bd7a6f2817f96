#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking
import Logging

/// A search: a query through a URL template, cached under its own key, page by page.
///
/// ```swift
/// let sky = cache.search("sky", at: "https://swapi.dev/api/people/?search={query}", contract: .people)
/// let first = try await sky.load()          // page 1, cached
/// let more = try await sky.loadMore()       // page 2 appended: in this process or any later one
/// ```
///
/// The cache holds the merged list of every page loaded so far, with where the next page is and
/// when each page was fetched: the list is as old as its oldest page, so loading more never
/// keeps the first page alive past its max age. A search whose contract caches objects writes
/// them in the same append as the list (all or nothing).
public struct SearchResource<Item: Codable & Sendable>: Sendable {
    /// The cache key.
    public let key: String
    /// The query, as typed.
    public let query: String
    /// The URL template: `{query}` is filled in percent-encoded, `{page}` with the page number.
    public let template: String
    /// What the pages must be and where the next one is.
    public let contract: SearchContract<Item>
    /// How long the cached list serves; `nil` (the default): as long as the max age it was saved
    /// under, and a new save records the contract's.
    public var maxAge: MaxAge?
    /// Which side the first page asks first.
    public var strategy: CacheStrategy
    /// How often invalid data from the remote is asked for again.
    public var retries: Int
    /// How long to wait before each retry.
    public var backoff: RetryBackoff
    let client: CacheClient

    init(client: CacheClient, key: String, query: String, template: String, contract: SearchContract<Item>) {
        self.client = client
        self.key = key
        self.query = query
        self.template = template
        self.contract = contract
        strategy = contract.defaults.strategy
        retries = contract.defaults.retries
        backoff = .exponential()
    }

    /// Loads the first page by the strategy: the remote's page replaces the cached list, or the
    /// cached list serves while fresh.
    ///
    /// Overlapping loads of this search share one (as ``FeedResource/load()``'s do).
    ///
    /// - Throws: ``NoUsableDataError`` when neither side delivered.
    public func load() async throws -> CacheLoad<Item> {
        try await client.inFlight.load(identity("load")) { try await loadFirstPage() }
    }

    /// What makes two loads of this search the same one: the page asked for and the settings.
    private func identity(_ page: String) -> LoadCoalescer.Identity {
        LoadCoalescer.Identity(
            key: key, request: [page, template, query], contract: contract.name, strategy: strategy, maxAge: maxAge,
            retries: retries, backoff: backoff, type: ObjectIdentifier(Item.self))
    }

    private func loadFirstPage() async throws -> CacheLoad<Item> {
        let start = client.clock()
        let began = FetchStart()
        let local = localLoader(at: start)
        let arrived = Locked<SearchPage<Item>?>(nil)
        let first = AnyFeedLoader<Item>.remote {
            began.mark(client.fetchPosition())
            let page = try await fetch(.number(1))
            arrived.withLock { $0 = page }
            return page.items
        }
        let cache = SearchCache(local: local) { items in
            let next = arrived.withLock { $0?.next }
            return try await save(items, next: next, pages: [start], objectsOf: items, since: began.since)
        }
        let loader = strategy.compose(remote: retried(first), cache: cache, logger: client.logger)
        let loaded: LoadedFeed<Item>
        do {
            loaded = try await loader.loadFeed()
        } catch let error as NoUsableFeedError {
            client.metrics.count(CacheMetrics.Label.misses, contract: contract.name)
            throw NoUsableDataError(error, key: key, strategy: strategy, judgedAt: client.clock())
        } catch let error where strategy == .cacheOnly && !(error is CancellationError) {
            throw NoUsableDataError(key: key, remoteError: nil, cacheError: error, judgedAt: client.clock())
        }
        client.metrics.record(loaded, strategy: strategy, contract: contract.name)
        if loaded.cacheTimestamp == nil {
            return CacheLoad(
                key: key, items: loaded.items, source: .remote, timestamp: start, cacheSave: loaded.cacheSave,
                more: arrived.withLock { $0?.next != nil }, pages: [start],
                skippedObjects: cache.skipped)
        }
        return try cached(loaded)
    }

    /// Loads the page after the cached list and caches the merged list, as old as its oldest
    /// page. It continues from where the log says the list ends, so it works in any process that
    /// opens the database after the first page was loaded.
    ///
    /// A list cached from another URL template (another endpoint's pages) is not extended: the
    /// search starts over with this template's first page. When the cached list is the whole
    /// result, it is delivered as it is, with ``CacheLoad/more`` `false`.
    ///
    /// Overlapping calls share one: the next page is asked for and appended once.
    ///
    /// - Throws: ``NoMoreResultsError`` when the cached list is missing or expired, or the remote
    ///   failed (the cache is then as it was).
    public func loadMore() async throws -> CacheLoad<Item> {
        try await client.inFlight.load(identity("more")) { try await loadNextPage() }
    }

    private func loadNextPage() async throws -> CacheLoad<Item> {
        let start = client.clock()
        let began = FetchStart()
        let local = localLoader(at: start)
        let list: LoadedFeed<Item>
        let entry: LogState.Entry?
        do {
            list = try await local.loadFeed()
            entry = try client.opener.existing()?.entry(key)
        } catch {
            throw NoMoreResultsError(key: key, cause: error, remoteFailed: false, judgedAt: start)
        }
        let metadata = entry?.metadata ?? [:]
        if let recorded = metadata[SearchRecord.templateName], recorded != template {
            client.logger.info("Starting the search over: its cache came from another URL template", metadata: ["key": "\(key)"])
            return try await load()
        }
        guard let next = metadata[SearchRecord.nextName].flatMap(PageCursor.init(recorded:)) else { return try cached(list) }
        let earlierPages = SearchRecord.pages(metadata, fallback: list.cacheTimestamp ?? start)
        let page: SearchPage<Item>
        do {
            let fetched = Locked<SearchPage<Item>?>(nil)
            _ = try await retried(AnyFeedLoader<Item>.remote {
                began.mark(client.fetchPosition())
                let page = try await fetch(next)
                fetched.withLock { $0 = page }
                return page.items
            }).loadFeed()
            guard var arrived = fetched.withLock({ $0 }) else { throw CancellationError() }
            // A page that names itself (or the page it came from) as the next one would append its
            // items again at every "more": it is the last.
            if case .url(let url) = arrived.next, case .url(let current) = next, url == current { arrived.next = nil }
            page = arrived
        } catch let error where !(error is CancellationError) {
            throw NoMoreResultsError(key: key, cause: error, remoteFailed: true, judgedAt: start)
        }
        // An empty last page only says there is no more: nothing of the list came from it, so it
        // is not one of the list's pages (nor does its time age the list).
        let pages = page.items.isEmpty ? earlierPages : earlierPages + [start]
        let merged = list.items + page.items
        // The objects of the earlier pages were saved when those pages were fetched, and keep
        // that age: saving them again now would make them look as new as this page.
        let saving = SearchCache(local: local) { items in
            try await save(items, next: page.next, pages: pages, objectsOf: page.items, since: began.since)
        }
        let saved = await saving.saveReporting(merged, logger: client.logger)
        client.metrics.record(
            LoadedFeed(items: merged, source: .remote, cacheSave: saved), strategy: .remoteFirst, contract: contract.name)
        return CacheLoad(
            key: key, items: merged, source: .remote, timestamp: pages.min() ?? start, cacheSave: saved, more: page.next != nil,
            pages: pages, skippedObjects: saving.skipped)
    }

    /// A list the cache delivered, with what its put recorded: where the next page is and when
    /// each page was fetched.
    private func cached(_ loaded: LoadedFeed<Item>) throws -> CacheLoad<Item> {
        let timestamp = loaded.cacheTimestamp ?? client.clock()
        let metadata = try client.opener.existing()?.entry(key)?.metadata ?? [:]
        return CacheLoad(
            key: key, items: loaded.items, source: loaded.source, timestamp: timestamp, cacheSave: loaded.cacheSave,
            remoteFailure: CacheLoad.remoteFailure(of: loaded), more: metadata[SearchRecord.nextName] != nil,
            pages: SearchRecord.pages(metadata, fallback: timestamp))
    }

    /// One page from the remote.
    private func fetch(_ cursor: PageCursor) async throws -> SearchPage<Item> {
        let number: Int
        let url: URL?
        switch cursor {
        case .number(let page):
            number = page
            url = URL(string: SearchTemplate.expand(template, query: query, page: page))
        case .url(let next):
            number = 0
            url = next
        }
        guard let url else { throw RemoteLoaderError.invalidData("the page's URL is not a URL") }
        let request = SearchPageRequest(number: number, numbered: template.contains("{page}"))
        let remote = RemoteLoader(url: url, client: client.http, mapper: { data, response in
            try contract.page(data, response, request)
        }, logger: client.logger)
        return try await client.metrics.timingRemote(contract: contract.name) { try await remote.load() }
    }

    private func retried(_ loader: any FeedLoader<Item>) -> any FeedLoader<Item> {
        FeedLoaderRetryDecorator(retryingInvalidDataOf: loader, retries: retries, backoff: backoff)
    }

    private func localLoader(at start: Date) -> LocalFeedLoader<Item> {
        LocalFeedLoader(
            store: ClientFeedStore(opener: client.opener, key: key), currentDate: { start }, judgingDate: client.clock,
            policy: CachePolicy(maxAge: maxAge ?? contract.defaults.maxAge), coder: .json, contract: contract.name,
            judging: maxAge == nil ? .recordedPolicy : .ownPolicy, logger: client.logger)
    }

    /// Saves the merged list `items` (as old as the oldest of `pages`) and the objects that
    /// `fetched`, the items of the page just fetched, name, in one append, unless the cached list
    /// is newer by the log's order (saved meanwhile by a load whose request began no earlier than
    /// this one's, at `since`; read now when it is nil); an object whose live cache is newer by the same rule (loaded on its own
    /// meanwhile) is left as it is. Returns the object keys skipped because the database cannot
    /// hold them.
    private func save(
        _ items: [Item], next: PageCursor?, pages: [Date], objectsOf fetched: [Item], since: UInt64?
    ) async throws -> [String] {
        let log = try client.opener.writable(for: [key])
        let timestamp = pages.min() ?? client.clock()
        var metadata = [SearchRecord.queryName: query, SearchRecord.templateName: template, SearchRecord.pageTimesName: SearchRecord.pageTimesText(pages)]
        metadata[SearchRecord.nextName] = next?.recorded
        var events: [Event] = [
            .delete(key: key, reason: .replaced),
            CacheLogFeedStore.put(
                key: key, feed: try FeedPayloadCoder<Item>.json.encode(items), timestamp: timestamp,
                policy: RecordedPolicy(maxAge: maxAge ?? contract.defaults.maxAge, contract: contract.name), metadata: metadata),
        ]
        var skipped: [String] = []
        var objectKeys: [String] = []
        if let objects = contract.objects {
            for item in fetched {
                guard let url = objects.url(item) else { continue }
                let objectKey = CacheKey.object(url)
                // A key the database cannot hold would fail the whole append: it is left out and named.
                guard objectKey.utf8.count <= log.maxKeySize else {
                    skipped.append(objectKey)
                    continue
                }
                let fetchedAt = pages.last ?? timestamp
                objectKeys.append(objectKey)
                events.append(.delete(key: objectKey, reason: .replaced))
                events.append(CacheLogFeedStore.put(
                    key: objectKey, feed: try objects.contract.coder.encode([item]), timestamp: fetchedAt,
                    policy: RecordedPolicy(maxAge: objects.contract.defaults.maxAge, contract: objects.contract.name)))
            }
        }
        let position = try since ?? log.lastSeq()
        let outcome = try await log.append(events, unlessSupersededSince: position, liveAt: key, leavingNewer: objectKeys)
        if let refused = NewerCacheError(outcome, loadBegan: position) { throw refused }
        return skipped
    }
}

/// A search's cache as a strategy composes it: loads the cached list (a `LocalFeedLoader`) and
/// saves a list through the search's own save, which records the cursor and the pages and
/// writes the objects; keeps which object keys that save had to skip.
private final class SearchCache<Item: Codable & Sendable>: FeedLoader, FeedCaching, Sendable {
    private let local: LocalFeedLoader<Item>
    private let saving: @Sendable ([Item]) async throws -> [String]
    private let skippedKeys = Locked<[String]>([])

    init(local: LocalFeedLoader<Item>, save: @escaping @Sendable ([Item]) async throws -> [String]) {
        self.local = local
        saving = save
    }

    var skipped: [String] { skippedKeys.withLock { $0 } }

    func loadFeed() async throws -> LoadedFeed<Item> { try await local.loadFeed() }

    func save(_ items: [Item]) async throws {
        let skipped = try await saving(items)
        skippedKeys.withLock { $0 = skipped }
    }

    /// Saves `items`, saying what became of the save, as a cache decorator does.
    func saveReporting(_ items: [Item], logger: Logger) async -> CacheSaveOutcome {
        do {
            try await save(items)
            return .saved
        } catch let error as NewerCacheError {
            return .superseded(by: error)
        } catch {
            logger.warning("Could not cache the search's results", metadata: ["error": "\(error)"])
            return .failed(error)
        }
    }
}
