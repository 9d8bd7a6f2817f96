import CacheLog
import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// The image feed app, composed as the app composes it: the remote feed, saved into the `feed`
/// cache when it arrives, with the cache (7 days) as the fallback; and image data from the local
/// cache first, then from the server (saving what it delivers under `image:<url>`).
private struct ImageFeedApp {
    let feed: any FeedLoader<FeedImage>
    let cache: LocalFeedLoader<FeedImage>
    let imageData: any ImageDataLoader

    init(_ env: AppEnvironment) {
        let remote = RemoteLoader(url: env.url("/feed"), client: env.client, mapper: FeedImagesMapper.map)
        cache = LocalFeedLoader(
            store: CacheLogFeedStore(log: env.log, key: "feed"), currentDate: env.clock.function, policy: .feeds)
        feed = FeedLoaderWithFallbackComposite(
            primary: FeedLoaderCacheDecorator(decoratee: AnyFeedLoader.remote { try await remote.load() }, cache: cache),
            fallback: cache)

        let remoteImages = RemoteImageDataLoader(client: env.client)
        let localImages = LocalImageDataLoader(store: CacheLogImageDataStore(log: env.log, currentDate: env.clock.function))
        imageData = ImageDataLoaderWithFallbackComposite(
            primary: localImages,
            fallback: ImageDataLoaderCacheDecorator(
                decoratee: AnyImageDataLoader { try await remoteImages.loadImageData(from: $0) }, cache: localImages))
    }
}

@Suite("Image feed app: remote feed, 7-day cache on the log", .hangGuard)
struct ImageFeedAcceptanceTests {
    @Test
    func imageFeed_onlineLoad_deliversRemoteImagesAndReplacesTheCache() async throws {
        let (env, app) = try await imageFeedAppWithCache(of: [sunset])
        env.clock.set(1, daysAfter: TestClock.start)
        env.serve(feed([sunset, harbour]))

        let loaded = try await app.feed.loadFeed()

        #expect(loaded == LoadedFeed(items: [sunset, harbour], source: .remote, cacheSave: .saved))
        #expect(try await app.cache.load() == [sunset, harbour])
        #expect(try env.loggedEvents() == LoggedEvent.save("feed", at: TestClock.start) + LoggedEvent.save("feed", at: env.clock.date))
    }

    @Test(arguments: Offline.allCases)
    func imageFeed_offlineWithFreshCache_deliversCachedImages(offline: Offline) async throws {
        let (env, app) = try await imageFeedAppWithCache(of: [sunset, harbour])
        env.clock.set(3, daysAfter: TestClock.start)
        env.goOffline(offline)

        let loaded = try await app.feed.loadFeed()

        #expect(loaded == LoadedFeed(items: [sunset, harbour], source: .cache(timestamp: TestClock.start)))
        #expect(try env.loggedEvents() == LoggedEvent.save("feed", at: TestClock.start))
    }

    @Test
    func imageFeed_offlineWithCacheOneSecondShortOfSevenDaysOld_deliversCachedImages() async throws {
        let (env, app) = try await imageFeedAppWithCache(of: [sunset])
        env.clock.set(7, daysAfter: TestClock.start, plusSeconds: -1)
        env.goOffline()

        let loaded = try await app.feed.loadFeed()

        #expect(loaded == LoadedFeed(items: [sunset], source: .cache(timestamp: TestClock.start)))
        #expect(try env.loggedEvents() == LoggedEvent.save("feed", at: TestClock.start))
    }

    @Test
    func imageFeed_offlineWithCacheExactlySevenDaysOld_deliversNoUsableFeedError() async throws {
        let (env, app) = try await imageFeedAppWithCache(of: [sunset])
        env.clock.set(7, daysAfter: TestClock.start)
        env.goOffline()

        let error = await caughtError { try await app.feed.loadFeed() }

        expectNoUsableFeed(error, remote: .connectivity, cache: .expired(timestamp: TestClock.start, maxAge: .days(7)))
        #expect(try env.loggedEvents() == LoggedEvent.save("feed", at: TestClock.start))
    }

    @Test
    func imageFeed_offlineWithCacheMoreThanSevenDaysOld_deliversNoUsableFeedError() async throws {
        let (env, app) = try await imageFeedAppWithCache(of: [sunset])
        env.clock.set(8, daysAfter: TestClock.start)
        env.goOffline(.invalidJSON)

        let error = await caughtError { try await app.feed.loadFeed() }

        expectNoUsableFeed(error, remote: .invalidData, cache: .expired(timestamp: TestClock.start, maxAge: .days(7)))
        #expect(try env.loggedEvents() == LoggedEvent.save("feed", at: TestClock.start))
    }

    @Test
    func imageFeed_offlineWithEmptyCache_deliversNoUsableFeedError() async throws {
        let env = try AppEnvironment(serving: feed([sunset]))
        let app = ImageFeedApp(env)
        env.goOffline()

        let error = await caughtError { try await app.feed.loadFeed() }

        expectNoUsableFeed(error, remote: .connectivity, cache: .empty)
        #expect(try env.loggedEvents() == [])
    }

    @Test
    func imageFeed_validateCache_removesAnExpiredCacheWithAnExpireEvent() async throws {
        let (env, app) = try await imageFeedAppWithCache(of: [sunset])
        env.clock.set(7, daysAfter: TestClock.start, plusSeconds: 1)

        try await app.cache.validateCache()

        env.goOffline()
        expectNoUsableFeed(await caughtError { try await app.feed.loadFeed() }, remote: .connectivity,
                           cache: .gone(.expired(at: env.clock.date, timestamp: TestClock.start, maxAge: days(7))))
        #expect(try env.loggedEvents() == LoggedEvent.save("feed", at: TestClock.start) + [
            .expire("feed", timestamp: TestClock.start, maxAge: days(7)),
        ])
    }

    @Test
    func imageFeed_validateCache_keepsACacheOneSecondShortOfSevenDaysOld() async throws {
        let (env, app) = try await imageFeedAppWithCache(of: [sunset])
        env.clock.set(7, daysAfter: TestClock.start, plusSeconds: -1)

        try await app.cache.validateCache()

        #expect(try await app.cache.load() == [sunset])
        #expect(try env.loggedEvents() == LoggedEvent.save("feed", at: TestClock.start))
    }

    // MARK: - Image data

    @Test
    func imageData_firstLoad_deliversServerDataAndCachesItUnderTheImageURLKey() async throws {
        let env = try AppEnvironment(serving: routes(["/images/sunset.png": HTTPResponse(status: 200, body: sunsetPNG)]))
        let app = ImageFeedApp(env)
        let url = env.url("/images/sunset.png")

        let data = try await app.imageData.loadImageData(from: url)

        #expect(data == sunsetPNG)
        #expect(env.server.requestCount == 1)
        #expect(try env.log.retrieve("image:\(url.absoluteString)")?.payload == sunsetPNG)
        #expect(try env.loggedEvents() == [.put("image:\(url.absoluteString)", timestamp: TestClock.start)])
    }

    @Test
    func imageData_secondLoad_isServedFromTheCacheWithoutARequest() async throws {
        let env = try AppEnvironment(serving: routes(["/images/sunset.png": HTTPResponse(status: 200, body: sunsetPNG)]))
        let app = ImageFeedApp(env)
        let url = env.url("/images/sunset.png")
        _ = try await app.imageData.loadImageData(from: url)

        let data = try await app.imageData.loadImageData(from: url)

        #expect(data == sunsetPNG)
        #expect(env.server.requestCount == 1)
        #expect(try env.loggedEvents() == [.put("image:\(url.absoluteString)", timestamp: TestClock.start)])
    }

    @Test
    func imageData_cancelledLoad_deliversNeitherDataNorError() async throws {
        let slowImage = HTTPResponse(status: 200, body: sunsetPNG).delayed(by: .seconds(600))
        let env = try AppEnvironment(serving: routes(["/images/sunset.png": slowImage]))
        let app = ImageFeedApp(env)
        let url = env.url("/images/sunset.png")

        let load = Task { try await app.imageData.loadImageData(from: url) }
        #expect(await env.server.waitForRequests(count: 1))
        load.cancel()
        let error = await caughtError { try await load.value }

        // In async terms "neither data nor error" means CancellationError and nothing else.
        #expect(error is CancellationError)
        #expect(env.server.requestCount == 1)
        #expect(try env.loggedEvents() == [])
    }

    // MARK: - Helpers

    /// The app, after an online load at ``TestClock/start`` that cached `cached`.
    private func imageFeedAppWithCache(of cached: [FeedImage]) async throws -> (AppEnvironment, ImageFeedApp) {
        let env = try AppEnvironment(serving: feed(cached))
        let app = ImageFeedApp(env)
        #expect(try await app.feed.loadFeed() == LoadedFeed(items: cached, source: .remote, cacheSave: .saved))
        return (env, app)
    }
}

// MARK: - Sample payloads (contract: {"items": [{id, description, location, image}]})

private let sunset = FeedImage(
    id: UUID(uuidString: "73A7F70C-75DA-4C2E-B5A3-EED40DC53AA6")!, description: "Sunset over the bay",
    location: "Lisbon", url: URL(string: "https://images.example/sunset.png")!)

private let harbour = FeedImage(
    id: UUID(uuidString: "BA298A85-6275-48D3-8315-9C8F7C1CD109")!, description: nil,
    location: nil, url: URL(string: "https://images.example/harbour.png")!)

private let sunsetPNG = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])

/// The server's handler for `GET /feed` answering `images` in the image feed contract.
private func feed(_ images: [FeedImage]) -> LoopbackHTTPServer.Handler {
    let items: [[String: Any]] = images.map {
        ["id": $0.id.uuidString, "description": $0.description ?? NSNull(), "location": $0.location ?? NSNull(),
         "image": $0.url.absoluteString]
    }
    return routes(["/feed": .json(jsonData(["items": items]))])
}
