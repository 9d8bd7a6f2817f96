import FeedCache
import Foundation
import Testing

@Suite("Validate feed cache")
struct ValidateFeedCacheUseCaseTests {
    @Test func init_doesNotMessageStoreUponCreation() async {
        let (_, store) = makeSUT()

        #expect(await store.messages.isEmpty)
    }

    @Test func validateCache_deletesCacheWithRetrievalErrorReasonOnRetrievalError() async throws {
        let (sut, store) = makeSUT(retrieving: .failure(anyError()))

        try await sut.validateCache()

        #expect(await store.messages == [.retrieve, .delete(.retrievalError)])
    }

    @Test func validateCache_doesNothingOnEmptyCache() async throws {
        let (sut, store) = makeSUT(retrieving: .success(nil))

        try await sut.validateCache()

        #expect(await store.messages == [.retrieve])
    }

    @Test(arguments: LoadFeedFromCacheUseCaseTests.policies, currentDates)
    func validateCache_doesNothingOnCacheLessThanMaxAgeOld(_ policy: CachePolicy, now: Date) async throws {
        let timestamp = now.minus(policy.maxAge).adding(seconds: 1)
        let (sut, store) = makeSUT(policy: policy, now: now, retrieving: .success(CachedFeed(feed: try encoded(uniqueItems()), timestamp: timestamp)))

        try await sut.validateCache()

        #expect(await store.messages == [.retrieve])
    }

    @Test(arguments: LoadFeedFromCacheUseCaseTests.policies, currentDates)
    func validateCache_expiresCacheExactlyMaxAgeOldWithItsTimestampAndTheMaxAge(_ policy: CachePolicy, now: Date) async throws {
        let timestamp = now.minus(policy.maxAge)
        let (sut, store) = makeSUT(policy: policy, now: now, retrieving: .success(CachedFeed(feed: try encoded(uniqueItems()), timestamp: timestamp)))

        try await sut.validateCache()

        #expect(await store.messages == [.retrieve, .expire(timestamp, policy.maxAge.timeInterval)])
    }

    @Test(arguments: LoadFeedFromCacheUseCaseTests.policies, currentDates)
    func validateCache_expiresCacheMoreThanMaxAgeOldWithItsTimestampAndTheMaxAge(_ policy: CachePolicy, now: Date) async throws {
        let timestamp = now.minus(policy.maxAge).adding(seconds: -1)
        let (sut, store) = makeSUT(policy: policy, now: now, retrieving: .success(CachedFeed(feed: try encoded(uniqueItems()), timestamp: timestamp)))

        try await sut.validateCache()

        #expect(await store.messages == [.retrieve, .expire(timestamp, policy.maxAge.timeInterval)])
    }

    @Test func validateCache_recordsSevenDaysAsTheFeedMaxAgeAndThirtyDaysAsTheSearchMaxAge() async throws {
        for (policy, seconds) in [(CachePolicy.feeds, 604_800.0), (.search, 2_592_000.0)] {
            let timestamp = fixedCurrentDate.adding(days: -31)
            let (sut, store) = makeSUT(policy: policy, retrieving: .success(CachedFeed(feed: anyData(), timestamp: timestamp)))

            try await sut.validateCache()

            #expect(await store.messages == [.retrieve, .expire(timestamp, seconds)])
        }
    }

    @Test func validateCache_deletesAFreshCacheWhosePayloadNoLongerDecodes_asARetrievalError() async throws {
        let (sut, store) = makeSUT(retrieving: .success(CachedFeed(feed: anyData("not json"), timestamp: fixedCurrentDate)))

        try await sut.validateCache()

        #expect(await store.messages == [.retrieve, .delete(.retrievalError)])
    }

    @Test func validateCache_expiresAnExpiredCacheWithoutDecodingIt() async throws {
        let timestamp = fixedCurrentDate.adding(days: -7)
        let (sut, store) = makeSUT(retrieving: .success(CachedFeed(feed: anyData("not json"), timestamp: timestamp)))

        try await sut.validateCache()

        #expect(await store.messages == [.retrieve, .expire(timestamp, 604_800)])
    }

    @Test func validateCache_judgedByTheRecordedPolicy_expiresByTheMaxAgeTheCacheWasSavedUnder() async throws {
        let timestamp = fixedCurrentDate.adding(days: -2)
        let cache = CachedFeed(feed: try encoded([]), timestamp: timestamp, policy: RecordedPolicy(maxAge: .days(1)))
        let store = FeedStoreSpy(retrieving: .success(cache))
        let sut = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }, policy: .search, judging: .recordedPolicy)

        try await sut.validateCache()

        #expect(await store.messages == [.retrieve, .expire(timestamp, 86_400)])
    }

    @Test func validateCache_judgedByTheRecordedPolicy_usesTheLoadersPolicyForACacheSavedWithoutOne() async throws {
        let timestamp = fixedCurrentDate.adding(days: -8)
        let store = FeedStoreSpy(retrieving: .success(CachedFeed(feed: try encoded([]), timestamp: timestamp)))
        let sut = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }, policy: .search, judging: .recordedPolicy)

        try await sut.validateCache()

        #expect(await store.messages == [.retrieve], "30 days, the loader's policy, holds an 8-day-old cache fresh")
    }

    @Test func validateCache_judgedByTheLoadersPolicy_ignoresTheRecordedOne() async throws {
        let timestamp = fixedCurrentDate.adding(days: -2)
        let cache = CachedFeed(feed: try encoded([]), timestamp: timestamp, policy: RecordedPolicy(maxAge: .days(1)))
        let store = FeedStoreSpy(retrieving: .success(cache))
        let sut = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }, policy: .feeds)

        try await sut.validateCache()

        #expect(await store.messages == [.retrieve])
    }

    @Test func validateCache_failsOnDeletionErrorOfACacheThatCannotBeRetrieved() async {
        let deletionError = anyError("deletion")
        let (sut, _) = makeSUT(retrieving: .failure(anyError()), failingWritesWith: deletionError)

        await #expect(throws: deletionError) {
            try await sut.validateCache()
        }
    }

    @Test func validateCache_failsOnExpiryError() async {
        let expiryError = anyError("expiry")
        let (sut, _) = makeSUT(
            retrieving: .success(CachedFeed(feed: anyData(), timestamp: fixedCurrentDate.adding(days: -8))),
            failingWritesWith: expiryError
        )

        await #expect(throws: expiryError) {
            try await sut.validateCache()
        }
    }

    @Test func validateCache_removesAnExpiredCacheSoThatLoadDeliversNothing() async throws {
        let store = InMemoryFeedStore(cachedFeed: CachedFeed(feed: try encoded(uniqueItems()), timestamp: fixedCurrentDate.adding(days: -7)))
        let sut = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate })

        try await sut.validateCache()

        #expect(await store.cachedFeed == nil)
        #expect(try await sut.load() == [])
    }

    // MARK: - Helpers

    private func makeSUT(
        policy: CachePolicy = .feeds,
        now: Date = fixedCurrentDate,
        retrieving result: Result<CachedFeed?, AnyError> = .success(nil),
        failingWritesWith writeError: AnyError? = nil
    ) -> (sut: LocalFeedLoader<TestItem>, store: FeedStoreSpy) {
        let store = FeedStoreSpy(retrieving: result, failingWritesWith: writeError)
        return (LocalFeedLoader(store: store, currentDate: { now }, policy: policy), store)
    }
}
