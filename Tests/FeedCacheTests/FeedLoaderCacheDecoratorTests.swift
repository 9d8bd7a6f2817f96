import FeedCache
import Foundation
import Testing

@Suite("Feed loader cache decorator")
struct FeedLoaderCacheDecoratorTests {
    @Test func load_deliversTheDecorateeFeed() async throws {
        let feed = remoteFeed()
        let sut = FeedLoaderCacheDecorator(decoratee: FeedLoaderSpy(.success(feed)), cache: FeedCacheSpy())

        #expect(try await sut.loadFeed() == feed)
    }

    @Test func load_failsWithTheDecorateeErrorAndCachesNothing() async {
        let cache = FeedCacheSpy()
        let sut = FeedLoaderCacheDecorator(decoratee: FeedLoaderSpy(.failure(anyError("remote"))), cache: cache)

        await #expect(throws: anyError("remote")) {
            try await sut.loadFeed()
        }
        #expect(await cache.savedFeeds.isEmpty)
    }

    @Test func load_cachesTheItemsOfARemoteFeed() async throws {
        let items = uniqueItems()
        let cache = FeedCacheSpy()
        let sut = FeedLoaderCacheDecorator(decoratee: FeedLoaderSpy(.success(remoteFeed(items))), cache: cache)

        _ = try await sut.loadFeed()

        #expect(await cache.savedFeeds == [items])
    }

    @Test func load_doesNotCacheAFeedThatCameFromTheCacheSoStaleItemsKeepTheirTimestamp() async throws {
        let cache = FeedCacheSpy()
        let sut = FeedLoaderCacheDecorator(decoratee: FeedLoaderSpy(.success(cachedFeed())), cache: cache)

        _ = try await sut.loadFeed()

        #expect(await cache.savedFeeds.isEmpty)
    }

    @Test func load_deliversTheFeedEvenWhenCachingFails() async throws {
        let feed = remoteFeed()
        let sut = FeedLoaderCacheDecorator(decoratee: FeedLoaderSpy(.success(feed)), cache: FeedCacheSpy(failingWith: anyError("disk full")))

        #expect(try await sut.loadFeed() == feed)
    }
}
