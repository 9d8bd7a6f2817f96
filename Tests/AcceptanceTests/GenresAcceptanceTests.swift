import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation
import Locking
import LoopbackHTTP
import TestSupport
import Testing

/// The podcast genres app, composed as its spec asks: cache first (a cached list younger than 7
/// days is shown with no request), else the remote list, retried 2 times when the server sends
/// invalid data (never on connectivity errors), saved into the `genres` cache when it arrives.
private struct GenresApp {
    let genres: any FeedLoader<Genre>
    let cache: LocalFeedLoader<Genre>

    init(_ env: AppEnvironment) {
        let remote = RemoteLoader(url: env.url("/genres"), client: env.client, mapper: GenresMapper.map)
        let retried = FeedLoaderRetryDecorator(
            decoratee: AnyFeedLoader.remote { try await remote.load() }, retries: 2,
            isRetryable: { $0 as? RemoteLoaderError == .invalidData })
        cache = LocalFeedLoader(
            store: CacheLogFeedStore(log: env.log, key: "genres"), currentDate: env.clock.function, policy: .feeds,
            contract: "genres")
        genres = CacheStrategy.cacheFirst.compose(remote: retried, cache: cache)
    }
}

@Suite("Podcast genres app: cache first, the remote list retried on invalid data, 7-day cache on the log", .hangGuard)
struct GenresAcceptanceTests {
    // MARK: - The six scenarios of the spec, each with the requests the server saw

    @Test
    func scenario1_connectivityAndEmptyCache_fetchesTheRemoteListAndCachesIt() async throws {
        let env = try AppEnvironment(serving: genresList([business, comedy]))
        let app = GenresApp(env)

        let loaded = try await app.genres.loadFeed()

        #expect(env.server.requestCount == 1)
        #expect(loaded == LoadedFeed(items: [business, comedy], source: .remote, cacheSave: .saved))
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start))
    }

    @Test(arguments: [0, 3 * 86_400, 7 * 86_400 - 1])
    func scenario2_connectivityAndCacheYoungerThanSevenDays_showsTheCachedListWithNoRequest(secondsLater: Int) async throws {
        let (env, app) = try await genresAppWithCache(of: [business])
        env.clock.set(0, daysAfter: TestClock.start, plusSeconds: secondsLater)
        env.serve(genresList([business, comedy]))

        let loaded = try await app.genres.loadFeed()

        #expect(env.server.requestCount == 1, "only the load that filled the cache")
        #expect(loaded == LoadedFeed(items: [business], source: .cache(timestamp: TestClock.start)))
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start))
    }

    @Test(arguments: [7, 30])
    func scenario3_connectivityAndCacheSevenDaysOldOrMore_fetchesTheRemoteListAndReplacesTheCache(daysLater: Int) async throws {
        let (env, app) = try await genresAppWithCache(of: [business])
        env.clock.set(daysLater, daysAfter: TestClock.start)
        env.serve(genresList([business, comedy]))

        let loaded = try await app.genres.loadFeed()

        #expect(env.server.requestCount == 2)
        #expect(loaded == LoadedFeed(items: [business, comedy], source: .remote, cacheSave: .saved))
        #expect(try await app.cache.load() == [business, comedy])
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start) + LoggedEvent.save("genres", at: env.clock.date))
    }

    @Test(arguments: Offline.allCases)
    func scenario4_noConnectivityAndCacheYoungerThanSevenDays_showsTheCachedList(offline: Offline) async throws {
        let (env, app) = try await genresAppWithCache(of: [business, comedy])
        env.clock.set(7, daysAfter: TestClock.start, plusSeconds: -1)
        env.goOffline(offline)

        let loaded = try await app.genres.loadFeed()

        #expect(env.server.requestCount == 1, "a fresh cache asks nothing of the remote")
        #expect(loaded == LoadedFeed(items: [business, comedy], source: .cache(timestamp: TestClock.start)))
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start))
    }

    @Test(arguments: [7, 30])
    func scenario5_noConnectivityAndCacheSevenDaysOldOrMore_deliversAnError(daysLater: Int) async throws {
        let (env, app) = try await genresAppWithCache(of: [business])
        env.clock.set(daysLater, daysAfter: TestClock.start)
        env.serve { _ in .closeConnection }

        let error = await caughtError { try await app.genres.loadFeed() }

        #expect(env.server.requestCount == 2, "connectivity errors are not retried")
        expectNoUsableFeed(
            error, remote: .connectivity, cache: .expired(timestamp: TestClock.start, maxAge: .days(7)), strategy: .cacheFirst)
        #expect(try env.loggedEvents() == LoggedEvent.save("genres", at: TestClock.start))
    }

    @Test
    func scenario6_noConnectivityAndEmptyCache_deliversAnError() async throws {
        let env = try AppEnvironment(serving: genresList([business]))
        let app = GenresApp(env)
        env.serve { _ in .closeConnection }

        let error = await caughtError { try await app.genres.loadFeed() }

        #expect(env.server.requestCount == 1)
        expectNoUsableFeed(error, remote: .connectivity, cache: .empty, strategy: .cacheFirst)
        #expect(try env.loggedEvents() == [])
    }

    @Test
    func unreadableCache_goesToTheRemote_andTheRemoteListReplacesIt() async throws {
        let (env, app) = try await genresAppWithCache(of: [business])
        try await env.log.append([
            .delete(key: "genres", reason: .replaced),
            .put(key: "genres", payload: Data("not genres".utf8), timestamp: TestClock.start),
        ])
        env.serve(genresList([comedy]))

        let loaded = try await app.genres.loadFeed()

        #expect(env.server.requestCount == 2)
        #expect(loaded == LoadedFeed(items: [comedy], source: .remote, cacheSave: .saved))
    }

    // MARK: - Validate cache

    @Test
    func genres_validateCache_removesAnExpiredCacheWithAnExpireEvent() async throws {
        let (env, app) = try await genresAppWithCache(of: [business])
        env.clock.set(7, daysAfter: TestClock.start)

        try await app.cache.validateCache()

        env.goOffline()
        expectNoUsableFeed(await caughtError { try await app.genres.loadFeed() }, remote: .connectivity,
                           cache: .gone(.expired(at: env.clock.date, timestamp: TestClock.start, maxAge: days(7))), strategy: .cacheFirst)
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

    // MARK: - Retry (the remote is asked only once the cache is of no use)

    @Test(arguments: [Offline.invalidJSON, .serverError])
    func genres_invalidData_isRetriedTwice_thenTheExpiredCacheIsNoUseEither(offline: Offline) async throws {
        let (env, app) = try await genresAppWithCache(of: [business])
        env.clock.set(7, daysAfter: TestClock.start)
        env.goOffline(offline)

        let error = await caughtError { try await app.genres.loadFeed() }

        #expect(env.server.requestCount == 1 + 3)
        expectNoUsableFeed(
            error, remote: .invalidData, cache: .expired(timestamp: TestClock.start, maxAge: .days(7)), strategy: .cacheFirst)
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
