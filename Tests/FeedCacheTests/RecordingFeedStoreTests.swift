import FeedCache
import Foundation
import Testing

@Suite("RecordingFeedStore")
struct RecordingFeedStoreTests {
    private func expiredCache() -> CachedFeed {
        CachedFeed(feed: anyData(), timestamp: fixedCurrentDate.minus(.days(7)))
    }

    @Test func validate_overADryRun_recordsTheExpire_andLeavesTheCacheInPlace() async throws {
        let store = InMemoryFeedStore(cachedFeed: expiredCache())
        let recording = RecordingFeedStore(store, dryRun: true)
        let loader = LocalFeedLoader<TestItem>(store: recording, currentDate: { fixedCurrentDate })

        try await loader.validateCache()

        #expect(await recording.writes == [.expire(timestamp: expiredCache().timestamp, maxAge: 7 * 86_400)])
        #expect(await store.cachedFeed == expiredCache())
        #expect(await store.operations == [.retrieve])
    }

    @Test func validate_overARealRun_recordsTheExpire_andPassesItOn() async throws {
        let store = InMemoryFeedStore(cachedFeed: expiredCache())
        let recording = RecordingFeedStore(store, dryRun: false)
        let loader = LocalFeedLoader<TestItem>(store: recording, currentDate: { fixedCurrentDate })

        try await loader.validateCache()

        #expect(await recording.writes == [.expire(timestamp: expiredCache().timestamp, maxAge: 7 * 86_400)])
        #expect(await store.cachedFeed == nil)
    }

    @Test func aFailedWrite_isNotRecorded() async throws {
        let store = FailingWriteStore()
        let recording = RecordingFeedStore(store, dryRun: false)
        await #expect(throws: AnyError.self) { try await recording.deleteCachedFeed(reason: .retrievalError) }
        #expect(await recording.writes == [])
    }
}

private struct FailingWriteStore: FeedStore {
    func deleteCachedFeed(reason: DeletionReason) async throws { throw anyError() }
    func insert(_ feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) async throws { throw anyError() }
    func replace(with feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) async throws { throw anyError() }
    func expireCachedFeed(timestamp: Date, maxAge: TimeInterval) async throws { throw anyError() }
    func retrieve() async throws -> CachedFeed? { nil }
}
