import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// The Bible-verse semantic search app, composed as the app composes it: for each query, the
/// remote results, saved into that query's cache (`search:<query>`) when they arrive, with that
/// cache (30 days) as the fallback.
private struct VerseSearchApp {
    let cache: LocalSearchLoader<Verse>
    private let env: AppEnvironment

    init(_ env: AppEnvironment) {
        self.env = env
        cache = LocalSearchLoader(store: CacheLogKeyedFeedStore(log: env.log), currentDate: env.clock.function, policy: .search)
    }

    /// The results of `query`: remote first, the query's own cache otherwise.
    func search(_ query: String) -> any FeedLoader<Verse> {
        var components = URLComponents(url: env.url("/search"), resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "q", value: query)]
        let remote = RemoteLoader(url: components?.url ?? env.baseURL, client: env.client, mapper: VersesMapper.map)
        let local = cache.loader(for: query)
        return FeedLoaderWithFallbackComposite(
            primary: FeedLoaderCacheDecorator(decoratee: AnyFeedLoader.remote { try await remote.load() }, cache: local),
            fallback: local)
    }
}

@Suite("Verse search app: query-keyed 30-day cache on the log", .timeLimit(.minutes(1)))
struct VerseSearchAcceptanceTests {
    @Test
    func verseSearch_onlineSearch_deliversRemoteVersesAndReplacesTheQueryCache() async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["love one another": [john13_34]])
        env.clock.set(1, daysAfter: TestClock.start)
        env.serve(verses(["love one another": [john13_34, john15_12]]))

        let loaded = try await app.search("love one another").loadFeed()

        #expect(loaded == LoadedFeed(items: [john13_34, john15_12], source: .remote, cacheSave: .saved))
        #expect(try await app.cache.load(for: "love one another") == [john13_34, john15_12])
        #expect(try env.loggedEvents()
            == LoggedEvent.save("search:love one another", at: TestClock.start)
            + LoggedEvent.save("search:love one another", at: env.clock.date))
    }

    @Test
    func verseSearch_twoQueries_areCachedUnderSeparateKeys() async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["love one another": [john13_34], "peace": [john14_27]])
        env.goOffline()

        #expect(try await app.search("love one another").loadFeed().items == [john13_34])
        #expect(try await app.search("peace").loadFeed().items == [john14_27])
        #expect(try env.loggedEvents()
            == LoggedEvent.save("search:love one another", at: TestClock.start)
            + LoggedEvent.save("search:peace", at: TestClock.start))
    }

    @Test(arguments: Offline.allCases)
    func verseSearch_offlineWithFreshCache_deliversCachedVerses(offline: Offline) async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["peace": [john14_27]])
        env.clock.set(10, daysAfter: TestClock.start)
        env.goOffline(offline)

        let loaded = try await app.search("peace").loadFeed()

        #expect(loaded == LoadedFeed(items: [john14_27], source: .cache(timestamp: TestClock.start)))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:peace", at: TestClock.start))
    }

    @Test
    func verseSearch_offlineWithCacheOneSecondShortOfThirtyDaysOld_deliversCachedVerses() async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["peace": [john14_27]])
        env.clock.set(30, daysAfter: TestClock.start, plusSeconds: -1)
        env.goOffline()

        let loaded = try await app.search("peace").loadFeed()

        #expect(loaded == LoadedFeed(items: [john14_27], source: .cache(timestamp: TestClock.start)))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:peace", at: TestClock.start))
    }

    @Test
    func verseSearch_offlineWithCacheExactlyThirtyDaysOld_deliversNoUsableFeedError() async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["peace": [john14_27]])
        env.clock.set(30, daysAfter: TestClock.start)
        env.goOffline()

        let error = await caughtError { try await app.search("peace").loadFeed() }

        expectNoUsableFeed(error, remote: .connectivity, cache: .expired(timestamp: TestClock.start, maxAge: .days(30)))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:peace", at: TestClock.start))
    }

    @Test
    func verseSearch_offlineWithCacheMoreThanThirtyDaysOld_deliversNoUsableFeedError() async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["peace": [john14_27]])
        env.clock.set(30, daysAfter: TestClock.start, plusSeconds: 1)
        env.goOffline(.serverError)

        let error = await caughtError { try await app.search("peace").loadFeed() }

        expectNoUsableFeed(error, remote: .invalidData, cache: .expired(timestamp: TestClock.start, maxAge: .days(30)))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:peace", at: TestClock.start))
    }

    @Test
    func verseSearch_offlineWithEmptyCacheForTheQuery_deliversNoUsableFeedErrorEvenWhenAnotherQueryIsCached() async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["peace": [john14_27]])
        env.goOffline()

        let error = await caughtError { try await app.search("love one another").loadFeed() }

        expectNoUsableFeed(error, remote: .connectivity, cache: .empty)
        #expect(try env.loggedEvents() == LoggedEvent.save("search:peace", at: TestClock.start))
    }

    @Test
    func verseSearch_validateCache_removesOnlyTheExpiredQueryCacheWithAnExpireEvent() async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["peace": [john14_27]])
        env.clock.set(10, daysAfter: TestClock.start)
        let tenDaysLater = env.clock.date
        env.serve(verses(["love one another": [john13_34]]))
        _ = try await app.search("love one another").loadFeed()
        env.clock.set(30, daysAfter: TestClock.start)

        try await app.cache.validateCache(for: "peace")
        try await app.cache.validateCache(for: "love one another")

        #expect(try await app.cache.load(for: "peace") == [])
        #expect(try await app.cache.load(for: "love one another") == [john13_34])
        #expect(try env.loggedEvents()
            == LoggedEvent.save("search:peace", at: TestClock.start)
            + LoggedEvent.save("search:love one another", at: tenDaysLater)
            + [.expire("search:peace", timestamp: TestClock.start, maxAge: days(30))])
    }

    // MARK: - Helpers

    /// The app, after online searches at ``TestClock/start`` that cached `cached` (query → verses),
    /// in query order.
    private func verseSearchAppWithCache(of cached: [String: [Verse]]) async throws -> (AppEnvironment, VerseSearchApp) {
        let env = try AppEnvironment(serving: verses(cached))
        let app = VerseSearchApp(env)
        for (query, results) in cached.sorted(by: { $0.key < $1.key }) {
            #expect(try await app.search(query).loadFeed() == LoadedFeed(items: results, source: .remote, cacheSave: .saved))
        }
        return (env, app)
    }
}

// MARK: - Sample payloads (contract: a top-level array of {scripture, distance, text})

private let john13_34 = Verse(
    scripture: "John 13:34", distance: 0.12,
    text: "A new commandment I give unto you, That ye love one another; as I have loved you.")
private let john15_12 = Verse(
    scripture: "John 15:12", distance: 0.18, text: "This is my commandment, That ye love one another, as I have loved you.")
private let john14_27 = Verse(
    scripture: "John 14:27", distance: 0.09, text: "Peace I leave with you, my peace I give unto you.")

/// The server's handler for `GET /search?q=<query>` answering `results[query]` (or no verses).
private func verses(_ results: [String: [Verse]]) -> LoopbackHTTPServer.Handler {
    let bodies = results.mapValues { verses in
        jsonData(verses.map { ["scripture": $0.scripture, "distance": $0.distance, "text": $0.text] as [String: Any] })
    }
    return { request in
        guard request.path == "/search" else { return .notFound }
        return .json(bodies[request.queryValue("q") ?? ""] ?? Data("[]".utf8))
    }
}
