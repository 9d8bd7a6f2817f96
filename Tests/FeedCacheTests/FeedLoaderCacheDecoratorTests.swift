import FeedCache
import Foundation
import Testing

@Suite("Feed loader cache decorator")
struct FeedLoaderCacheDecoratorTests {
    @Test func load_deliversTheDecorateeFeedMarkedSaved() async throws {
        let feed = remoteFeed()
        let sut = FeedLoaderCacheDecorator(decoratee: FeedLoaderSpy(.success(feed)), cache: FeedCacheSpy())

        #expect(try await sut.loadFeed() == LoadedFeed(items: feed.items, source: .remote, cacheSave: .saved))
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
        let feed = cachedFeed()
        let sut = FeedLoaderCacheDecorator(decoratee: FeedLoaderSpy(.success(feed)), cache: cache)

        let loaded = try await sut.loadFeed()

        #expect(await cache.savedFeeds.isEmpty)
        #expect(loaded == feed)
        #expect(loaded.cacheSave == .notAttempted)
    }

    @Test func load_doesNotSaveAFeedAlreadySavedOnItsWay_soARevalidatedFeedIsWrittenOnce() async throws {
        let cache = FeedCacheSpy()
        let feed = LoadedFeed(items: uniqueItems(), source: .remote, cacheSave: .saved, revalidated: true)
        let sut = FeedLoaderCacheDecorator(decoratee: FeedLoaderSpy(.success(feed)), cache: cache)

        let loaded = try await sut.loadFeed()

        #expect(await cache.savedFeeds.isEmpty)
        #expect(loaded == feed)
    }

    @Test func load_deliversTheFeedEvenWhenCachingFails_carryingTheSaveError() async throws {
        let feed = remoteFeed()
        let sut = FeedLoaderCacheDecorator(decoratee: FeedLoaderSpy(.success(feed)), cache: FeedCacheSpy(failingWith: anyError("disk full")))

        let loaded = try await sut.loadFeed()

        #expect(loaded.items == feed.items)
        #expect(loaded.source == .remote)
        guard case .failed(let error) = loaded.cacheSave else {
            Issue.record("expected a failed save, got \(loaded.cacheSave)")
            return
        }
        #expect(error as? AnyError == anyError("disk full"))
    }

    @Test func load_aFailedSaveIsNeverEqualToASavedOne() {
        #expect(CacheSaveOutcome.failed(anyError("disk full")) != .saved)
        #expect(CacheSaveOutcome.failed(anyError("disk full")) != .failed(anyError("key too long")))
        #expect(CacheSaveOutcome.failed(anyError("disk full")) == .failed(anyError("disk full")))
    }
}
