import CacheLog
import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation
import Logging

/// The main job, composed from the use cases by the strategy: remote first (retried on invalid
/// data) with the cache as the fallback, or a fresh cache first with the remote as the fallback;
/// remote items are cached on their way. A search (`search`) loads one page: the first, or with
/// `more` the next one after the cached list, which it extends. A load that is not a search asks
/// the remote conditionally, with the validators kept with the cache (``RevalidatingFeedLoader``);
/// a search's cache is a merged list no single response's validators describe.
struct LoadJob: ContractBody {
    let log: EventLog
    let key: String
    /// The URL, `{query}` and `{page}` not yet filled in.
    let url: String
    let contract: Contract
    let maxAge: MaxAge
    /// Whose max age judges the cache: `--max-age` when given (`.loaders`), else the one the
    /// cache was saved under (`.recorded`), so that `load` agrees with `state` and `validate`.
    let judging: PolicyChoice
    let strategy: CacheStrategy
    let retries: Int
    let search: SearchRequest?
    let now: @Sendable () -> Date
    let client: any HTTPClient
    let logger: Logger

    func run() async throws -> LoadReport {
        try await contract.visit(self)
    }

    func run<Item: Sendable>(
        _ mapper: @escaping @Sendable (Data, HTTPResponse) throws -> [Item], coder: FeedPayloadCoder<Item>,
        contract: Contract, render: @escaping @Sendable (Item) throws -> String
    ) async throws -> LoadReport {
        let cursor = search.map { PageCursor(query: $0.query) }
        // One instant for the whole load: what a save records is what the report says.
        let start = now()
        let local = LocalFeedLoader<Item>(
            store: CacheLogFeedStore(log: log, key: key, metadata: { cursor?.metadata ?? [:] }), currentDate: { start },
            policy: CachePolicy(maxAge: maxAge), coder: coder, contract: ContractName(builtIn: contract.rawValue), judging: judging, logger: logger)

        // The page to load, and the items it extends (none, unless this is `--more`).
        var page = 1
        var pageURL = SearchRequest.expand(url, query: search?.query, page: page)
        var previous: [Item] = []
        if let search, search.more {
            let cached: LoadedFeed<Item>
            do {
                cached = try await local.loadFeed()
            } catch {
                throw CLIFailure("no more results for \(key): \(describeCache(error, now: now())); search again without --more", code: Exit.noUsableData)
            }
            guard let next = try log.entry(key)?.metadata[SearchRequest.nextName] else {
                // The server said the cached list is all there is: it stays as it was.
                return LoadReport(
                    source: .cache, key: key, timestamp: cached.cacheTimestamp ?? now(), age: now().timeIntervalSince(cached.cacheTimestamp ?? now()),
                    items: try cached.items.map(render), saveError: nil, more: false)
            }
            previous = cached.items
            if let number = Int(next) {
                page = number
                pageURL = SearchRequest.expand(url, query: search.query, page: page)
            } else {
                pageURL = next
            }
        }
        guard let remoteURL = URL(string: pageURL) else { throw CLIFailure("'\(pageURL)' is not a URL") }
        let loadedPage = page
        let numbered = url.contains("{page}")
        let remote = RemoteLoader(url: remoteURL, client: client, mapper: { data, response in
            let items = try mapper(data, response)
            return (items, contract.nextPage(after: data, response: response, items: items.count, page: loadedPage, numbered: numbered))
        }, logger: logger)
        let fromRemote: any FeedLoader<Item> = if search == nil {
            RevalidatingFeedLoader(remote: { [resource = remoteURL.absoluteString] validators in
                // Validators vouch for the URL they came with: a key loaded from a new URL asks for
                // the whole feed once.
                switch try await remote.load(validators: HTTPValidators(validators.describing(resource))) {
                case let .modified((items, _), validators): .modified(items, CacheValidators(validators, resource: resource))
                case let .notModified(validators): .notModified(CacheValidators(validators, resource: resource))
                }
            }, cache: local, logger: logger)
        } else {
            AnyFeedLoader<Item>.remote { [previous] in
                let (items, next) = try await remote.load()
                cursor?.set(next)
                return previous + items
            }
        }
        let retried = FeedLoaderRetryDecorator(
            decoratee: fromRemote,
            retries: retries,
            isRetryable: { ($0 as? RemoteLoaderError) == .invalidData })
        // More results extend the cached list or fail: the cache is never the answer to "more".
        let loader: any FeedLoader<Item> = search?.more == true
            ? FeedLoaderCacheDecorator(decoratee: retried, cache: local, logger: logger)
            : strategy.compose(remote: retried, cache: local, logger: logger)

        let loaded: LoadedFeed<Item>
        do {
            loaded = try await loader.loadFeed()
        } catch let error as NoUsableFeedError {
            let (remoteError, cacheError) = strategy == .remoteFirst
                ? (error.primaryError, error.fallbackError) : (error.fallbackError, error.primaryError)
            throw CLIFailure(
                "no usable data for \(key): \(describeRemote(remoteError)); \(describeCache(cacheError, now: now()))",
                code: Exit.noUsableData)
        } catch let error as RemoteLoaderError {
            throw CLIFailure("no more results for \(key): \(describeRemote(error)); the cache is as it was", code: Exit.noUsableData)
        }
        let at = now()
        let timestamp = loaded.cacheTimestamp ?? start
        var saveError: (any Error)? = switch (loaded.source, loaded.cacheSave) {
        case (.cache, _), (.remote, .saved): nil
        case (.remote, .failed(let error)): error
        case (.remote, .superseded(let timestamp)): NewerCacheError(timestamp: timestamp)
        // Every remote feed passes the cache decorator; one that did not was not saved either.
        case (.remote, .notAttempted): CLIFailure("the items were not handed to the cache")
        }
        if saveError == nil, contract == .people, loaded.source == .remote, let people = loaded.items as? [Person] {
            saveError = await cacheObjects(people, at: start)
        }
        return LoadReport(
            source: loaded.cacheTimestamp == nil ? .remote : .cache, key: key, timestamp: timestamp,
            age: at.timeIntervalSince(timestamp), items: try loaded.items.map(render), saveError: saveError,
            more: search == nil ? nil : loaded.source == .remote ? cursor?.more : try log.entry(key)?.metadata[SearchRequest.nextName] != nil,
            revalidated: loaded.revalidated)
    }

    /// The people search app's object cache: each person a search returned, under `object:<url>`,
    /// so that loading that person (`--contract person`) asks nothing of the remote while fresh.
    private func cacheObjects(_ people: [Person], at start: Date) async -> (any Error)? {
        for person in people {
            guard let url = person.url, url.isHTTP else { continue }
            let object = LocalFeedLoader<Person>(
                store: CacheLogFeedStore(log: log, key: Self.objectKey(url.absoluteString)), currentDate: { start },
                policy: CachePolicy(maxAge: Contract.person.maxAge), contract: ContractName(builtIn: Contract.person.rawValue), logger: logger)
            do {
                try await object.save([person])
            } catch {
                return error
            }
        }
        return nil
    }

    /// The object cache key of the resource at `url`.
    static func objectKey(_ url: String) -> String { "object:" + url }
}
