import FeedCache
import Foundation
import Testing

@Suite("In-memory feed store")
struct InMemoryFeedStoreTests {
    @Test func operations_areRecordedInTheOrderReceived() async throws {
        let sut = InMemoryFeedStore()
        let timestamp = fixedCurrentDate

        _ = await sut.retrieve()
        try await sut.insert(anyData("a"), timestamp: timestamp)
        try await sut.replace(with: anyData("b"), timestamp: timestamp)
        await sut.expireCachedFeed(timestamp: timestamp, maxAge: 60)
        try await sut.deleteCachedFeed()
        await sut.deleteCachedFeed(reason: .retrievalError)

        #expect(await sut.operations == [
            .retrieve,
            .insert(anyData("a"), timestamp: timestamp),
            .replace(anyData("b"), timestamp: timestamp),
            .expire(timestamp: timestamp, maxAge: 60),
            .delete(reason: .explicit),
            .delete(reason: .retrievalError),
        ])
    }

    @Test func cachedFeed_isReadWithoutRecordingAnOperation() async {
        let cache = CachedFeed(feed: anyData(), timestamp: fixedCurrentDate)
        let sut = InMemoryFeedStore(cachedFeed: cache)

        #expect(await sut.cachedFeed == cache)
        #expect(await sut.operations.isEmpty)
    }

    @Test func init_startsWithTheGivenCache() async {
        let cache = CachedFeed(feed: anyData(), timestamp: fixedCurrentDate)
        let sut = InMemoryFeedStore(cachedFeed: cache)

        #expect(await sut.retrieve() == cache)
    }
}
