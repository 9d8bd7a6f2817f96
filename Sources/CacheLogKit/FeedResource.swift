#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A feed: a key, a URL and a contract, loaded through the client's cache by a strategy.
///
/// ```swift
/// var genres = cache.feed("genres", at: genresURL, contract: .genres)   // cache first, 2 retries
/// genres.maxAge = .days(1)
/// let loaded = try await genres.load()
/// ```
///
/// Every property but the key, URL and contract starts at the contract's defaults.
public struct FeedResource<Item: Sendable>: Sendable {
    /// The cache key.
    public let key: String
    /// Where the feed is.
    public let url: URL
    /// What its body must be and how its items are cached.
    public let contract: FeedContract<Item>
    /// How long the cache serves. `nil` (the default): each cache is judged by the max age it was
    /// saved under, and a new save records the contract's (as a cron job or another app judges it).
    public var maxAge: MaxAge?
    /// Which side is asked first.
    public var strategy: CacheStrategy
    /// How often invalid data from the remote is asked for again.
    public var retries: Int
    /// How long to wait before each retry.
    public var backoff: RetryBackoff
    let client: CacheClient

    init(client: CacheClient, key: String, url: URL, contract: FeedContract<Item>) {
        self.client = client
        self.key = key
        self.url = url
        self.contract = contract
        strategy = contract.defaults.strategy
        retries = contract.defaults.retries
        backoff = .exponential()
    }

    /// Loads the feed by the strategy: the remote's items are cached on their way, the cache
    /// serves while fresh. A save never replaces a newer cache: one saved meanwhile by a load that
    /// began no earlier than this one, by the log's order (how far the log had got when each
    /// began), whatever the clocks that stamped them say; the save is then
    /// `CacheSaveOutcome.superseded(by:)`.
    ///
    /// Remote first, the remote is asked conditionally (with the validators kept with the cache):
    /// "not modified" refreshes the cache without a second copy of its bytes
    /// (``CacheLoad/revalidated``).
    ///
    /// Loads of this feed that overlap share one (``CacheClient`` coalesces them): one request,
    /// one save, the same result for each caller. A caller cancelled stops waiting at once; the
    /// request is cancelled when no caller still waits.
    ///
    /// - Throws: ``NoUsableDataError`` when neither side delivered, with both causes;
    ///   `CancellationError` when the task was cancelled.
    public func load() async throws -> CacheLoad<Item> {
        // A load the cache answers makes no request and no save: there is nothing to share, so a
        // fresh cache whose items the memory tier holds answers at once, without the hop to a
        // shared load (which doubled a warm load's time).
        if strategy != .remoteFirst, let hit = await heldCacheHit() { return hit }
        let identity = LoadCoalescer.Identity(
            key: key, request: ["load", url.absoluteString], contract: contract.name, strategy: strategy, maxAge: maxAge,
            retries: retries, backoff: backoff, type: ObjectIdentifier(Item.self))
        return try await client.inFlight.load(identity) { try await loadAlone() }
    }

    /// The fresh cache, when the memory tier holds this key's items; `nil` for anything else
    /// (nothing held, an expired or unreadable cache), which the strategy then handles.
    private func heldCacheHit() async -> CacheLoad<Item>? {
        guard let memory = client.memory, memory.held(key, as: Item.self) != nil else { return nil }
        let start = client.clock()
        guard let loaded = try? await localLoader(at: start, began: FetchStart()).loadFeed() else { return nil }
        client.metrics.record(loaded, strategy: strategy, contract: contract.name)
        return CacheLoad(key: key, loaded, start: start)
    }

    /// ``load()``, for the one caller that runs it.
    private func loadAlone() async throws -> CacheLoad<Item> {
        let start = client.clock()
        let began = FetchStart()
        let local = localLoader(at: start, began: began)
        let loader = strategy.compose(remote: retried(remote(into: local, began: began)), cache: local, logger: client.logger)
        do {
            let loaded = try await loader.loadFeed()
            client.metrics.record(loaded, strategy: strategy, contract: contract.name)
            return CacheLoad(key: key, loaded, start: start)
        } catch let error as NoUsableFeedError {
            client.metrics.count(CacheMetrics.Label.misses, contract: contract.name)
            throw NoUsableDataError(error, key: key, strategy: strategy, judgedAt: client.clock())
        } catch let error where strategy == .cacheOnly && !(error is CancellationError) {
            client.metrics.count(CacheMetrics.Label.misses, contract: contract.name)
            throw NoUsableDataError(key: key, remoteError: nil, cacheError: error, judgedAt: client.clock())
        }
    }

    /// Saves `items` into the cache as if the remote had just delivered them.
    ///
    /// It is TanStack Query's `setQueryData` and Apollo's `writeQuery`. The cache is stamped
    /// `timestamp`, under the contract's max age (or ``maxAge``), with no validators, so the next
    /// remote-first load asks for the whole feed. It replaces whatever is cached when it commits:
    /// of two writes, the last to commit is live, and a load whose request began before the write
    /// does not replace it.
    ///
    /// Loads that begin after the write do not join a load that began before it: they start
    /// their own, judged against what was written.
    ///
    /// - Parameters:
    ///   - items: What to cache.
    ///   - timestamp: The cache's timestamp; by default now, on the client's clock.
    /// - Throws: ``InvalidTimestampError`` for a timestamp that is not a finite date or is later
    ///   than the client's clock (no fetch happens in the future); what the contract's coder
    ///   throws for the items, and what the log throws. The cache is then as it was.
    public func write(_ items: [Item], timestamp: Date? = nil) async throws {
        let now = client.clock()
        let stamp = timestamp ?? now
        guard stamp.timeIntervalSince1970.isFinite, stamp <= now else { throw InvalidTimestampError(timestamp: stamp, now: now) }
        defer { client.inFlight.startAfresh(key) }
        do {
            try await localLoader(at: stamp, began: nil).save(items)
        } catch {
            client.metrics.count(CacheMetrics.Label.failedSaves, contract: contract.name)
            client.logger.warning("Could not write the items into the cache", metadata: ["key": "\(key)", "error": "\(error)"])
            throw error
        }
        client.metrics.count(CacheMetrics.Label.saves, contract: contract.name)
    }

    /// Removes what is cached under ``key`` (``CacheClient/remove(_:)``).
    ///
    /// - Returns: whether there was a cache to remove.
    /// - Throws: `CacheLogError` when the log fails.
    @discardableResult
    public func remove() async throws -> Bool {
        try await client.remove(key)
    }

    /// The cache then the remote (Apollo's `returnCacheDataAndFetch`, TanStack Query's
    /// stale-while-revalidate): the cached items at once, even when they are older than their
    /// max age (``CacheLoad/isFresh`` says so), then the remote's, saved. An empty or unreadable
    /// cache yields nothing first.
    ///
    /// The sequence ends after the remote's items; when the remote fails, it ends by throwing
    /// the remote's error (after cached items) or ``NoUsableDataError`` (after none).
    public func cacheThenRemote() -> AsyncThrowingStream<CacheLoad<Item>, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                let start = client.clock()
                let began = FetchStart()
                let local = localLoader(at: start, began: began)
                let cached = await staleCache(local, at: start)
                if let cached { continuation.yield(cached) }
                do {
                    let loaded = try await FeedLoaderCacheDecorator(
                        decoratee: retried(remote(into: local, began: began)), cache: local, logger: client.logger
                    ).loadFeed()
                    client.metrics.record(loaded, strategy: .remoteFirst, contract: contract.name)
                    continuation.yield(CacheLoad(key: key, loaded, start: start))
                    continuation.finish()
                } catch {
                    if cached != nil || error is CancellationError {
                        continuation.finish(throwing: error)
                    } else {
                        continuation.finish(throwing: NoUsableDataError(key: key, remoteError: error, cacheError: await emptyCache(), judgedAt: start))
                    }
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Why the cache held nothing, for ``cacheThenRemote()``: how its last cache ended, when the log says.
    private func emptyCache() async -> CacheUnavailableError {
        (try? await ClientFeedStore(opener: client.opener, key: key).ending()).flatMap { $0 }.map(CacheUnavailableError.gone) ?? .empty
    }

    /// The cached items whatever their age, for ``cacheThenRemote()``; `nil` when there are none.
    private func staleCache(_ local: LocalFeedLoader<Item>, at start: Date) async -> CacheLoad<Item>? {
        guard let cached = try? await local.loadIgnoringAge() else { return nil }
        client.metrics.count(cached.isFresh ? CacheMetrics.Label.hits : CacheMetrics.Label.staleServed, contract: contract.name)
        return cacheLoad(cached)
    }

    /// What the cache holds, whatever its age, as a load delivers it: from the cache, not saved again.
    func cacheLoad(_ cached: (items: [Item], timestamp: Date, isFresh: Bool)) -> CacheLoad<Item> {
        CacheLoad(
            key: key, items: cached.items, source: .cache(timestamp: cached.timestamp), timestamp: cached.timestamp,
            cacheSave: .notAttempted, isFresh: cached.isFresh)
    }

    /// The cache's use cases at one instant, `start`: what a save records is what the load reports.
    /// Its saves are judged by `began`, how far the log had got when the request began (`nil`: not
    /// judged, as a write's). A cache
    /// it reads is judged when it is read, on the client's clock: another process may save the key
    /// while the request runs, stamped after `start`, and that save is fresh, not a clock set ahead.
    func localLoader(at start: Date, began: FetchStart?) -> LocalFeedLoader<Item> {
        let held = client.memory.map { TierRead<Item>(tier: $0, key: key) }
        return LocalFeedLoader(
            store: ClientFeedStore(opener: client.opener, key: key, began: began, held: held), currentDate: { start }, judgingDate: client.clock,
            policy: CachePolicy(maxAge: maxAge ?? contract.defaults.maxAge), coder: held.map { $0.coder(over: contract.coder) } ?? contract.coder,
            contract: contract.name, judging: maxAge == nil ? .recordedPolicy : .ownPolicy, logger: client.logger)
    }

    /// The remote, asked conditionally with the cache's validators: validators vouch for the URL
    /// they came with, so a key loaded from a new URL asks for the whole feed once. Each request
    /// marks in `began` how far the log had got before it.
    private func remote(into local: LocalFeedLoader<Item>, began: FetchStart) -> RevalidatingFeedLoader<Item> {
        let remote = RemoteLoader(url: url, client: client.http, mapper: contract.map, logger: client.logger)
        let resource = url.absoluteString
        let metrics = client.metrics
        let name = contract.name
        let client = client
        return RevalidatingFeedLoader(remote: { validators in
            began.mark(client.fetchPosition())
            return switch try await metrics.timingRemote(contract: name, { try await remote.load(validators: HTTPValidators(validators.describing(resource))) }) {
            case let .modified(items, validators): .modified(items, CacheValidators(validators, resource: resource))
            case let .notModified(validators): .notModified(CacheValidators(validators, resource: resource))
            }
        }, cache: local, logger: client.logger)
    }

    private func retried(_ loader: any FeedLoader<Item>) -> any FeedLoader<Item> {
        FeedLoaderRetryDecorator(retryingInvalidDataOf: loader, retries: retries, backoff: backoff)
    }
}
