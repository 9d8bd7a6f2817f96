import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// The Studio Ghibli film app, composed as the app composes it: remote films, saved into the
/// `films` cache when they arrive, with the cache (7 days) as the fallback; and each film's
/// poster (image data) from the local cache first, then from the server, cached under `image:<url>`.
private struct FilmApp {
    let feed: any FeedLoader<Film>
    let cache: LocalFeedLoader<Film>
    let posters: any ImageDataLoader

    init(_ env: AppEnvironment) {
        let remote = RemoteLoader(url: env.url("/films"), client: env.client, mapper: FilmsMapper.map)
        cache = LocalFeedLoader(
            store: CacheLogFeedStore(log: env.log, key: "films"), currentDate: env.clock.function, policy: .feeds)
        feed = FeedLoaderWithFallbackComposite(
            primary: FeedLoaderCacheDecorator(decoratee: AnyFeedLoader.remote { try await remote.load() }, cache: cache),
            fallback: cache)

        let remotePosters = RemoteImageDataLoader(client: env.client)
        let localPosters = LocalImageDataLoader(store: CacheLogImageDataStore(log: env.log, currentDate: env.clock.function))
        posters = ImageDataLoaderWithFallbackComposite(
            primary: localPosters,
            fallback: ImageDataLoaderCacheDecorator(
                decoratee: AnyImageDataLoader { try await remotePosters.loadImageData(from: $0) }, cache: localPosters))
    }
}

@Suite("Film feed app: remote films, 7-day cache on the log", .hangGuard)
struct FilmFeedAcceptanceTests {
    @Test
    func filmFeed_onlineLoad_deliversRemoteFilmsAndReplacesTheCache() async throws {
        let (env, app) = try await filmAppWithCache(of: [castleInTheSky])
        env.clock.set(1, daysAfter: TestClock.start)
        env.serve(films([castleInTheSky, totoro]))

        let feed = try await app.feed.loadFeed()

        #expect(feed == LoadedFeed(items: [castleInTheSky, totoro], source: .remote, cacheSave: .saved))
        #expect(try await app.cache.load() == [castleInTheSky, totoro])
        #expect(try env.loggedEvents() == LoggedEvent.save("films", at: TestClock.start) + LoggedEvent.save("films", at: env.clock.date))
    }

    @Test(arguments: Offline.allCases)
    func filmFeed_offlineWithFreshCache_deliversCachedFilms(offline: Offline) async throws {
        let (env, app) = try await filmAppWithCache(of: [castleInTheSky, totoro])
        env.clock.set(3, daysAfter: TestClock.start)
        env.goOffline(offline)

        let feed = try await app.feed.loadFeed()

        #expect(feed == LoadedFeed(items: [castleInTheSky, totoro], source: .cache(timestamp: TestClock.start)))
        #expect(try env.loggedEvents() == LoggedEvent.save("films", at: TestClock.start))
    }

    @Test
    func filmFeed_offlineWithCacheOneSecondShortOfSevenDaysOld_deliversCachedFilms() async throws {
        let (env, app) = try await filmAppWithCache(of: [castleInTheSky])
        env.clock.set(7, daysAfter: TestClock.start, plusSeconds: -1)
        env.goOffline()

        let feed = try await app.feed.loadFeed()

        #expect(feed == LoadedFeed(items: [castleInTheSky], source: .cache(timestamp: TestClock.start)))
        #expect(try env.loggedEvents() == LoggedEvent.save("films", at: TestClock.start))
    }

    @Test
    func filmFeed_offlineWithCacheExactlySevenDaysOld_deliversNoUsableFeedError() async throws {
        let (env, app) = try await filmAppWithCache(of: [castleInTheSky])
        env.clock.set(7, daysAfter: TestClock.start)
        env.goOffline()

        let error = await caughtError { try await app.feed.loadFeed() }

        expectNoUsableFeed(error, remote: .connectivity, cache: .expired(timestamp: TestClock.start, maxAge: .days(7)))
        #expect(try env.loggedEvents() == LoggedEvent.save("films", at: TestClock.start))
    }

    @Test
    func filmFeed_offlineWithCacheMoreThanSevenDaysOld_deliversNoUsableFeedError() async throws {
        let (env, app) = try await filmAppWithCache(of: [castleInTheSky])
        env.clock.set(7, daysAfter: TestClock.start, plusSeconds: 1)
        env.goOffline(.serverError)

        let error = await caughtError { try await app.feed.loadFeed() }

        expectNoUsableFeed(error, remote: .invalidData, cache: .expired(timestamp: TestClock.start, maxAge: .days(7)))
        #expect(try env.loggedEvents() == LoggedEvent.save("films", at: TestClock.start))
    }

    @Test
    func filmFeed_offlineWithEmptyCache_deliversNoUsableFeedError() async throws {
        let env = try AppEnvironment(serving: films([castleInTheSky]))
        let app = FilmApp(env)
        env.goOffline()

        let error = await caughtError { try await app.feed.loadFeed() }

        expectNoUsableFeed(error, remote: .connectivity, cache: .empty)
        #expect(try env.loggedEvents() == [])
    }

    @Test
    func filmFeed_validateCache_removesAnExpiredCacheWithAnExpireEvent() async throws {
        let (env, app) = try await filmAppWithCache(of: [castleInTheSky])
        env.clock.set(7, daysAfter: TestClock.start)

        try await app.cache.validateCache()

        env.goOffline()
        expectNoUsableFeed(await caughtError { try await app.feed.loadFeed() }, remote: .connectivity,
                           cache: .gone(.expired(at: env.clock.date, timestamp: TestClock.start, maxAge: days(7))))
        #expect(try env.loggedEvents() == LoggedEvent.save("films", at: TestClock.start) + [
            .expire("films", timestamp: TestClock.start, maxAge: days(7)),
        ])
    }

    @Test
    func filmFeed_validateCache_keepsACacheOneSecondShortOfSevenDaysOld() async throws {
        let (env, app) = try await filmAppWithCache(of: [castleInTheSky])
        env.clock.set(7, daysAfter: TestClock.start, plusSeconds: -1)

        try await app.cache.validateCache()

        #expect(try await app.cache.load() == [castleInTheSky])
        #expect(try env.loggedEvents() == LoggedEvent.save("films", at: TestClock.start))
    }

    // MARK: - Image data (posters)

    @Test
    func poster_firstLoad_deliversServerDataAndCachesItUnderTheImageURLKey() async throws {
        let env = try AppEnvironment(serving: routes(["/posters/totoro.jpg": HTTPResponse(status: 200, body: totoroJPEG)]))
        let app = FilmApp(env)
        let url = env.url("/posters/totoro.jpg")

        let data = try await app.posters.loadImageData(from: url)

        #expect(data == totoroJPEG)
        #expect(env.server.requestCount == 1)
        #expect(try env.log.retrieve("image:\(url.absoluteString)")?.payload == totoroJPEG)
    }

    @Test
    func poster_secondLoad_isServedFromTheCacheWithoutARequest_evenOffline() async throws {
        let env = try AppEnvironment(serving: routes(["/posters/totoro.jpg": HTTPResponse(status: 200, body: totoroJPEG)]))
        let app = FilmApp(env)
        let url = env.url("/posters/totoro.jpg")
        _ = try await app.posters.loadImageData(from: url)
        env.goOffline()

        let data = try await app.posters.loadImageData(from: url)

        #expect(data == totoroJPEG)
        #expect(env.server.requestCount == 1)
        #expect(try env.loggedEvents() == [.put("image:\(url.absoluteString)", timestamp: TestClock.start)])
    }

    @Test(arguments: [Offline.serverError, .connectionRefused])
    func poster_notCachedAndNoServer_deliversAnError_andCachesNothing(offline: Offline) async throws {
        let env = try AppEnvironment(serving: routes(["/posters/totoro.jpg": HTTPResponse(status: 200, body: totoroJPEG)]))
        let app = FilmApp(env)
        env.goOffline(offline)

        let error = await caughtError { try await app.posters.loadImageData(from: env.url("/posters/totoro.jpg")) }

        #expect(error is RemoteLoaderError)
        #expect(try env.loggedEvents() == [])
    }

    @Test
    func poster_cancelledLoad_deliversNeitherDataNorError_andCachesNothing() async throws {
        let slow = HTTPResponse(status: 200, body: totoroJPEG).delayed(by: .seconds(600))
        let env = try AppEnvironment(serving: routes(["/posters/totoro.jpg": slow]))
        let app = FilmApp(env)

        let load = Task { try await app.posters.loadImageData(from: env.url("/posters/totoro.jpg")) }
        #expect(await env.server.waitForRequests(count: 1))
        load.cancel()
        let error = await caughtError { try await load.value }

        #expect(error is CancellationError)
        #expect(try env.loggedEvents() == [])
    }

    // MARK: - Helpers

    /// The app, after an online load at ``TestClock/start`` that cached `cached`.
    private func filmAppWithCache(of cached: [Film]) async throws -> (AppEnvironment, FilmApp) {
        let env = try AppEnvironment(serving: films(cached))
        let app = FilmApp(env)
        #expect(try await app.feed.loadFeed() == LoadedFeed(items: cached, source: .remote, cacheSave: .saved))
        return (env, app)
    }
}

// MARK: - Sample payloads (contract: a top-level array of {id, title, description, image, url})

/// A poster's bytes: a JPEG header and some noise.
private let totoroJPEG = Data([0xFF, 0xD8, 0xFF, 0xE0] + (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 37) })

private let castleInTheSky = Film(
    id: "2baf70d1-42bb-4437-b551-e5fed5a87abe", title: "Castle in the Sky",
    description: "The orphan Sheeta inherited a mysterious crystal that links her to the mythical sky-kingdom of Laputa.",
    image: URL(string: "https://ghibli.example/posters/castle-in-the-sky.jpg")!,
    url: URL(string: "https://ghibli.example/films/2baf70d1-42bb-4437-b551-e5fed5a87abe")!)

private let totoro = Film(
    id: "58611129-2dbc-4a81-a72f-77ddfc1b1b49", title: "My Neighbor Totoro",
    description: "Two sisters move to the country with their father in order to be closer to their hospitalized mother.",
    image: URL(string: "https://ghibli.example/posters/totoro.jpg")!,
    url: URL(string: "https://ghibli.example/films/58611129-2dbc-4a81-a72f-77ddfc1b1b49")!)

/// The server's handler for `GET /films` answering `list` in the film contract.
private func films(_ list: [Film]) -> LoopbackHTTPServer.Handler {
    let body: [[String: Any]] = list.map {
        ["id": $0.id, "title": $0.title, "description": $0.description,
         "image": $0.image.absoluteString, "url": $0.url.absoluteString]
    }
    return routes(["/films": .json(jsonData(body))])
}
