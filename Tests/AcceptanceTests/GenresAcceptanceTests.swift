import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// The podcast genres app, composed as the app composes it: the remote list, retried 2 times when
/// the server sends invalid data (never on connectivity errors), saved into the `genres` cache
/// when it arrives, with the cache (7 days) as the fallback.
private struct GenresApp {
    let genres: any FeedLoader<Genre>
    let cache: LocalFeedLoader<Genre>

    init(_ env: AppEnvironment) {
        let remote = RemoteLoader(url: env.url("/genres"), client: env.client, mapper: GenresMapper.map)
        let retried = FeedLoaderRetryDecorator(
            decoratee: AnyFeedLoader.remote { try await remote.load() }, retries: 2,
            isRetryable: { $0 as? RemoteLoaderError == .invalidData })
        cache = LocalFeedLoader(
            store: CacheLogFeedStore(log: env.log, key: "genres"), currentDate: env.clock.function, policy: .feeds)
        genres = FeedLoaderWithFallbackComposite(
            primary: FeedLoaderCacheDecorator(decoratee: retried, cache: cache),
            fallback: cache)
    }
}

@Suite("Podcast genres app: remote list retried on invalid data, 7-day cache on the log", .timeLimit(.minutes(1)))
struct GenresAcceptanceTests {
    @Test
    func genres_onlineLoad_deliversRemoteGenresAndReplacesTheCache() async throws {
        let (env, app) = try await genresAppWithCache(of: [business])
        env.clock.set(1, daysAfter: TestClock.start)
        env.serve(genresList([business, comedy]))

        let loaded = try await app.genres.loadFeed()

        #expect(loaded == LoadedFeed(items: [business, comedy], source: .remote, cacheSave: .saved))
        #expect(try await app.cache.load() == [business, comedy])
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start) + LoggedEvent.save("genres", at: env.clock.date))
    }

    @Test(arguments: Offline.allCases)
    func genres_offlineWithFreshCache_deliversCachedGenres(offline: Offline) async throws {
        let (env, app) = try await genresAppWithCache(of: [business, comedy])
        env.clock.set(3, daysAfter: TestClock.start)
        env.goOffline(offline)

        let loaded = try await app.genres.loadFeed()

        #expect(loaded == LoadedFeed(items: [business, comedy], source: .cache(timestamp: TestClock.start)))
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start))
    }

    @Test
    func genres_offlineWithCacheOneSecondShortOfSevenDaysOld_deliversCachedGenres() async throws {
        let (env, app) = try await genresAppWithCache(of: [business])
        env.clock.set(7, daysAfter: TestClock.start, plusSeconds: -1)
        env.goOffline()

        let loaded = try await app.genres.loadFeed()

        #expect(loaded == LoadedFeed(items: [business], source: .cache(timestamp: TestClock.start)))
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start))
    }

    @Test
    func genres_offlineWithCacheExactlySevenDaysOld_deliversNoUsableFeedError() async throws {
        let (env, app) = try await genresAppWithCache(of: [business])
        env.clock.set(7, daysAfter: TestClock.start)
        env.goOffline()

        let error = await caughtError { try await app.genres.loadFeed() }

        expectNoUsableFeed(error, remote: .connectivity, cache: .expired(timestamp: TestClock.start, maxAge: .days(7)))
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start))
    }

    @Test
    func genres_offlineWithCacheMoreThanSevenDaysOld_deliversNoUsableFeedError() async throws {
        let (env, app) = try await genresAppWithCache(of: [business])
        env.clock.set(30, daysAfter: TestClock.start)
        env.goOffline(.serverError)

        let error = await caughtError { try await app.genres.loadFeed() }

        expectNoUsableFeed(error, remote: .invalidData, cache: .expired(timestamp: TestClock.start, maxAge: .days(7)))
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start))
    }

    @Test
    func genres_offlineWithEmptyCache_deliversNoUsableFeedError() async throws {
        let env = try AppEnvironment(serving: genresList([business]))
        let app = GenresApp(env)
        env.goOffline()

        let error = await caughtError { try await app.genres.loadFeed() }

        expectNoUsableFeed(error, remote: .connectivity, cache: .empty)
        #expect(try env.loggedEvents() == [])
    }

    @Test
    func genres_validateCache_removesAnExpiredCacheWithAnExpireEvent() async throws {
        let (env, app) = try await genresAppWithCache(of: [business])
        env.clock.set(7, daysAfter: TestClock.start)

        try await app.cache.validateCache()

        env.goOffline()
        expectNoUsableFeed(await caughtError { try await app.genres.loadFeed() }, remote: .connectivity, cache: .empty)
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start) + [
            .expire("genres", timestamp: TestClock.start, maxAge: days(7)),
        ])
    }

    @Test
    func genres_validateCache_keepsACacheOneSecondShortOfSevenDaysOld() async throws {
        let (env, app) = try await genresAppWithCache(of: [business])
        env.clock.set(7, daysAfter: TestClock.start, plusSeconds: -1)

        try await app.cache.validateCache()

        #expect(try await app.cache.load() == [business])
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start))
    }

    // MARK: - Retry

    @Test(arguments: [Offline.invalidJSON, .serverError])
    func genres_invalidData_isRetriedTwiceBeforeFallingBackToTheCache(offline: Offline) async throws {
        let (env, app) = try await genresAppWithCache(of: [business])
        env.clock.set(1, daysAfter: TestClock.start)
        env.goOffline(offline)

        let loaded = try await app.genres.loadFeed()

        #expect(env.server.requestCount == 1 + 3)
        #expect(loaded == LoadedFeed(items: [business], source: .cache(timestamp: TestClock.start)))
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start))
    }

    @Test
    func genres_invalidDataTwiceThenValid_deliversRemoteGenresOnTheSecondRetryAndCachesThem() async throws {
        let valid = genresList([business, comedy])
        let requests = Locked(0)
        let env = try AppEnvironment(serving: { request in
            requests.withLock { $0 += 1; return $0 } <= 2 ? .json("{ not json") : valid(request)
        })
        let app = GenresApp(env)

        let loaded = try await app.genres.loadFeed()

        #expect(env.server.requestCount == 3)
        #expect(loaded == LoadedFeed(items: [business, comedy], source: .remote, cacheSave: .saved))
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start))
    }

    @Test
    func genres_connectivityError_isNotRetried() async throws {
        let (env, app) = try await genresAppWithCache(of: [business])
        env.clock.set(1, daysAfter: TestClock.start)
        env.serve { _ in .closeConnection }

        let loaded = try await app.genres.loadFeed()

        #expect(env.server.requestCount == 1 + 1)
        #expect(loaded == LoadedFeed(items: [business], source: .cache(timestamp: TestClock.start)))
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start))
    }

    // MARK: - Helpers

    /// The app, after an online load at ``TestClock/start`` (one request) that cached `cached`.
    private func genresAppWithCache(of cached: [Genre]) async throws -> (AppEnvironment, GenresApp) {
        let env = try AppEnvironment(serving: genresList(cached))
        let app = GenresApp(env)
        #expect(try await app.genres.loadFeed() == LoadedFeed(items: cached, source: .remote, cacheSave: .saved))
        return (env, app)
    }
}

// MARK: - Sample payloads (contract: {"genres": [{id, name}]})

private let business = Genre(id: 93, name: "Business")
private let comedy = Genre(id: 133, name: "Comedy")

/// The server's handler for `GET /genres` answering `genres` in the genres contract.
private func genresList(_ genres: [Genre]) -> LoopbackHTTPServer.Handler {
    let list: [[String: Any]] = genres.map { ["id": $0.id, "name": $0.name] }
    return routes(["/genres": .json(jsonData(["genres": list]))])
}
