import FeedCache
import Foundation
import Testing

@Suite("Feed loader with fallback")
struct FeedLoaderWithFallbackCompositeTests {
    @Test func load_deliversPrimaryFeedOnPrimarySuccessWithoutAskingTheFallback() async throws {
        let feed = remoteFeed()
        let primary = FeedLoaderSpy(.success(feed))
        let fallback = FeedLoaderSpy(.success(cachedFeed()))
        let sut = FeedLoaderWithFallbackComposite(primary: primary, fallback: fallback)

        #expect(try await sut.loadFeed() == feed)
        #expect(await fallback.callCount == 0)
    }

    @Test func load_deliversFallbackFeedWithItsSourceOnPrimaryFailure() async throws {
        let feed = cachedFeed(timestamp: fixedCurrentDate.adding(days: -2))
        let sut = FeedLoaderWithFallbackComposite(primary: FeedLoaderSpy(.failure(anyError())), fallback: FeedLoaderSpy(.success(feed)))

        let loaded = try await sut.loadFeed()

        #expect(loaded == feed)
        #expect(loaded.source == .cache(timestamp: fixedCurrentDate.adding(days: -2)))
    }

    @Test func load_deliversFallbackFeedCarryingThePrimarysError() async throws {
        let sut = FeedLoaderWithFallbackComposite(
            primary: FeedLoaderSpy(.failure(anyError("remote"))), fallback: FeedLoaderSpy(.success(cachedFeed(timestamp: fixedCurrentDate))))

        let loaded = try await sut.loadFeed()

        #expect(String(reflecting: try #require(loaded.primaryFailure)) == String(reflecting: anyError("remote")))
    }

    @Test func load_deliversPrimaryFeedWithNoFailure() async throws {
        let sut = FeedLoaderWithFallbackComposite(primary: FeedLoaderSpy(.success(cachedFeed(timestamp: fixedCurrentDate))), fallback: FeedLoaderSpy(.failure(anyError())))

        #expect(try await sut.loadFeed().primaryFailure == nil)
    }

    @Test func load_failsWithNoUsableFeedErrorCarryingBothErrorsOnBothFailures() async {
        let sut = FeedLoaderWithFallbackComposite(
            primary: FeedLoaderSpy(.failure(anyError("remote"))),
            fallback: FeedLoaderSpy(.failure(anyError("cache")))
        )

        let error = await #expect(throws: NoUsableFeedError.self) {
            try await sut.loadFeed()
        }

        #expect(error?.primaryError as? AnyError == anyError("remote"))
        #expect(error?.fallbackError as? AnyError == anyError("cache"))
    }

    @Test func load_doesNotFallBackWhenThePrimaryWasCancelled() async {
        let fallback = FeedLoaderSpy(.success(cachedFeed()))
        let sut = FeedLoaderWithFallbackComposite(primary: FeedLoaderSpy(.failure(CancellationError())), fallback: fallback)

        await #expect(throws: CancellationError.self) {
            try await sut.loadFeed()
        }
        #expect(await fallback.callCount == 0)
    }

    // MARK: - Remote with cache fallback, composed with the real cache

    @Test func remoteWithCacheFallback_deliversFreshCachedItemsWithTheirTimestampWhenRemoteFails() async throws {
        let items = uniqueItems()
        let savedAt = fixedCurrentDate.adding(days: -6)
        let cache = LocalFeedLoader<TestItem>(
            store: InMemoryFeedStore(cachedFeed: CachedFeed(feed: try encoded(items), timestamp: savedAt)),
            currentDate: { fixedCurrentDate }
        )
        let sut = FeedLoaderWithFallbackComposite(primary: AnyFeedLoader<TestItem>.remote { throw anyError("offline") }, fallback: cache)

        #expect(try await sut.loadFeed() == LoadedFeed(items: items, source: .cache(timestamp: savedAt)))
    }

    @Test func remoteWithCacheFallback_reportsAnEmptyCacheWhenRemoteFailsAndNothingWasCached() async {
        let cache = LocalFeedLoader<TestItem>(store: InMemoryFeedStore(), currentDate: { fixedCurrentDate })
        let sut = FeedLoaderWithFallbackComposite(primary: AnyFeedLoader<TestItem>.remote { throw anyError("offline") }, fallback: cache)

        let error = await #expect(throws: NoUsableFeedError.self) {
            try await sut.loadFeed()
        }

        #expect(error?.primaryError as? AnyError == anyError("offline"))
        #expect(error?.fallbackError as? CacheUnavailableError == .empty)
    }

    @Test func remoteWithCacheFallback_reportsAnExpiredCacheWithItsTimestampWhenRemoteFails() async throws {
        let savedAt = fixedCurrentDate.adding(days: -7)
        let cache = LocalFeedLoader<TestItem>(
            store: InMemoryFeedStore(cachedFeed: CachedFeed(feed: try encoded(uniqueItems()), timestamp: savedAt)),
            currentDate: { fixedCurrentDate }
        )
        let sut = FeedLoaderWithFallbackComposite(primary: AnyFeedLoader<TestItem>.remote { throw anyError("offline") }, fallback: cache)

        let error = await #expect(throws: NoUsableFeedError.self) {
            try await sut.loadFeed()
        }

        #expect(error?.fallbackError as? CacheUnavailableError == .expired(timestamp: savedAt, maxAge: .days(7)))
    }

    @Test func remoteWithCacheFallback_cachesRemoteItemsThenServesThemWhenRemoteFailsLater() async throws {
        let items = uniqueItems()
        let store = InMemoryFeedStore()
        let cache = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate })
        let online = FeedLoaderWithFallbackComposite(
            primary: FeedLoaderCacheDecorator(decoratee: AnyFeedLoader<TestItem>.remote { items }, cache: cache),
            fallback: cache
        )
        let offline = FeedLoaderWithFallbackComposite(
            primary: FeedLoaderCacheDecorator(decoratee: AnyFeedLoader<TestItem>.remote { throw anyError("offline") }, cache: cache),
            fallback: cache
        )

        #expect(try await online.loadFeed() == LoadedFeed(items: items, source: .remote, cacheSave: .saved))
        #expect(try await offline.loadFeed() == LoadedFeed(items: items, source: .cache(timestamp: fixedCurrentDate)))
        #expect(await store.operations == [
            .replace(try encoded(items), timestamp: fixedCurrentDate, policy: RecordedPolicy(maxAge: .days(7))), .retrieve,
        ])
    }
}
