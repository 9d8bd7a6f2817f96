import FeedCache
import Foundation
import Testing

@Suite("Load feed from cache")
struct LoadFeedFromCacheUseCaseTests {
    static let policies: [CachePolicy] = [
        .feeds, .search,
        CachePolicy(maxAge: .seconds(90)), CachePolicy(maxAge: .minutes(15)), CachePolicy(maxAge: .hours(12)),
    ]

    @Test func init_doesNotMessageStoreUponCreation() async {
        let (_, store) = makeSUT()

        #expect(await store.messages.isEmpty)
    }

    @Test func load_requestsCacheRetrieval() async throws {
        let (sut, store) = makeSUT()

        _ = try await sut.load()

        #expect(await store.messages == [.retrieve])
    }

    @Test func load_failsOnRetrievalError() async {
        let retrievalError = anyError("retrieval")
        let (sut, _) = makeSUT(retrieving: .failure(retrievalError))

        await #expect(throws: retrievalError) {
            try await sut.load()
        }
    }

    @Test func load_deliversNoItemsOnEmptyCache() async throws {
        let (sut, _) = makeSUT(retrieving: .success(nil))

        #expect(try await sut.load() == [])
    }

    @Test(arguments: policies, currentDates)
    func load_deliversCachedItemsOnCacheLessThanMaxAgeOld(_ policy: CachePolicy, now: Date) async throws {
        let items = uniqueItems()
        let timestamp = now.minus(policy.maxAge).adding(seconds: 1)
        let (sut, _) = makeSUT(policy: policy, now: now, retrieving: .success(CachedFeed(feed: try encoded(items), timestamp: timestamp)))

        #expect(try await sut.load() == items)
    }

    @Test(arguments: policies, currentDates)
    func load_deliversNoItemsOnCacheExactlyMaxAgeOld(_ policy: CachePolicy, now: Date) async throws {
        let timestamp = now.minus(policy.maxAge)
        let (sut, _) = makeSUT(policy: policy, now: now, retrieving: .success(CachedFeed(feed: try encoded(uniqueItems()), timestamp: timestamp)))

        #expect(try await sut.load() == [])
    }

    @Test(arguments: policies, currentDates)
    func load_deliversNoItemsOnCacheMoreThanMaxAgeOld(_ policy: CachePolicy, now: Date) async throws {
        let timestamp = now.minus(policy.maxAge).adding(seconds: -1)
        let (sut, _) = makeSUT(policy: policy, now: now, retrieving: .success(CachedFeed(feed: try encoded(uniqueItems()), timestamp: timestamp)))

        #expect(try await sut.load() == [])
    }

    @Test func load_deliversNoItemsOnCacheStampedInTheFuture() async throws {
        let items = uniqueItems()
        let (sut, _) = makeSUT(retrieving: .success(CachedFeed(feed: try encoded(items), timestamp: fixedCurrentDate.adding(seconds: 60))))

        #expect(try await sut.load() == [])
    }

    @Test func load_judgesACacheStampedLaterThanItsSaveWasRecordedFromTheRecording() async throws {
        let items = uniqueItems()
        let recorded = fixedCurrentDate.adding(days: -7)
        let (sut, _) = makeSUT(retrieving: .success(CachedFeed(
            feed: try encoded(items), timestamp: fixedCurrentDate.adding(seconds: -1), recordedAt: recorded)))

        #expect(try await sut.load() == [], "seven days after it was recorded, the cache is expired whatever its stamp says")
    }

    @Test func load_failsWithInvalidCachedFeedErrorOnUndecodablePayload() async {
        let (sut, _) = makeSUT(retrieving: .success(CachedFeed(feed: anyData("not json"), timestamp: fixedCurrentDate)))

        await #expect(throws: InvalidCachedFeedError.self) {
            try await sut.load()
        }
    }

    @Test func load_hasNoSideEffectsOnRetrievalError() async {
        let (sut, store) = makeSUT(retrieving: .failure(anyError()))

        _ = try? await sut.load()

        #expect(await store.messages == [.retrieve])
    }

    @Test func load_hasNoSideEffectsOnEmptyCache() async throws {
        let (sut, store) = makeSUT(retrieving: .success(nil))

        _ = try await sut.load()

        #expect(await store.messages == [.retrieve])
    }

    @Test(arguments: [-1.0, 0.0, 1.0])
    func load_hasNoSideEffectsWhateverTheCacheAge(_ secondsPastMaxAge: TimeInterval) async throws {
        let timestamp = fixedCurrentDate.minus(.days(7)).adding(seconds: -secondsPastMaxAge)
        let (sut, store) = makeSUT(retrieving: .success(CachedFeed(feed: try encoded(uniqueItems()), timestamp: timestamp)))

        _ = try await sut.load()

        #expect(await store.messages == [.retrieve])
    }

    // MARK: - Load with source (what a fallback composes)

    @Test func loadFeed_deliversCachedItemsWithTheCacheTimestampAsSource() async throws {
        let items = uniqueItems()
        let timestamp = fixedCurrentDate.adding(days: -1)
        let (sut, _) = makeSUT(retrieving: .success(CachedFeed(feed: try encoded(items), timestamp: timestamp)))

        let feed = try await sut.loadFeed()

        #expect(feed == LoadedFeed(items: items, source: .cache(timestamp: timestamp)))
        #expect(feed.cacheTimestamp == timestamp)
    }

    @Test func loadFeed_judgesAgesByTheJudgingClock_soACacheStampedAfterTheStampingInstantButBeforeNowIsFresh() async throws {
        let items = uniqueItems()
        let savedMeanwhile = fixedCurrentDate.adding(seconds: 300)
        let store = FeedStoreSpy(retrieving: .success(CachedFeed(feed: try encoded(items), timestamp: savedMeanwhile)))
        let sut = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }, judgingDate: { fixedCurrentDate.adding(seconds: 600) })

        #expect(try await sut.loadFeed() == LoadedFeed(items: items, source: .cache(timestamp: savedMeanwhile)))
        await #expect(throws: CacheUnavailableError.stampedInTheFuture(timestamp: savedMeanwhile)) {
            try await LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }).loadFeed()
        }
    }

    @Test func loadFeed_deliversACachedEmptyFeedAsAFeed() async throws {
        let (sut, _) = makeSUT(retrieving: .success(CachedFeed(feed: try encoded([]), timestamp: fixedCurrentDate)))

        #expect(try await sut.loadFeed() == LoadedFeed(items: [], source: .cache(timestamp: fixedCurrentDate)))
    }

    @Test func loadFeed_failsWithCacheUnavailableEmptyOnEmptyCache() async {
        let (sut, _) = makeSUT(retrieving: .success(nil))

        await #expect(throws: CacheUnavailableError.empty) {
            try await sut.loadFeed()
        }
    }

    @Test func loadFeed_failsWithCacheUnavailableExpiredCarryingTimestampAndMaxAgeOnCacheExactlyMaxAgeOld() async throws {
        let timestamp = fixedCurrentDate.minus(.days(7))
        let (sut, _) = makeSUT(retrieving: .success(CachedFeed(feed: try encoded(uniqueItems()), timestamp: timestamp)))

        await #expect(throws: CacheUnavailableError.expired(timestamp: timestamp, maxAge: .days(7))) {
            try await sut.loadFeed()
        }
    }

    @Test func loadFeed_failsWithTheStoreErrorOnRetrievalError() async {
        let retrievalError = anyError("retrieval")
        let (sut, _) = makeSUT(retrieving: .failure(retrievalError))

        await #expect(throws: retrievalError) {
            try await sut.loadFeed()
        }
    }

    @Test func loadFeed_hasNoSideEffectsOnExpiredCache() async throws {
        let timestamp = fixedCurrentDate.minus(.days(8))
        let (sut, store) = makeSUT(retrieving: .success(CachedFeed(feed: try encoded(uniqueItems()), timestamp: timestamp)))

        _ = try? await sut.loadFeed()

        #expect(await store.messages == [.retrieve])
    }

    // MARK: - Helpers

    private func makeSUT(
        policy: CachePolicy = .feeds,
        now: Date = fixedCurrentDate,
        retrieving result: Result<CachedFeed?, AnyError> = .success(nil)
    ) -> (sut: LocalFeedLoader<TestItem>, store: FeedStoreSpy) {
        let store = FeedStoreSpy(retrieving: result)
        return (LocalFeedLoader(store: store, currentDate: { now }, policy: policy), store)
    }
}
