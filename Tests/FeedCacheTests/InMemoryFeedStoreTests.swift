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

@Suite("In-memory keyed feed store")
struct InMemoryKeyedFeedStoreTests {
    @Test func store_keepsKeysThatDifferOnlyInUnicodeNormalizationApart() async throws {
        let sut = InMemoryKeyedFeedStore()
        let (nfc, nfd) = ("search:caf\u{E9}", "search:cafe\u{301}")

        try await sut.store(for: nfc).insert(anyData("nfc"), timestamp: fixedCurrentDate)
        try await sut.store(for: nfd).insert(anyData("nfd"), timestamp: fixedCurrentDate)

        #expect(try await sut.store(for: nfc).retrieve()?.feed == anyData("nfc"))
        #expect(try await sut.store(for: nfd).retrieve()?.feed == anyData("nfd"))
        // In byte order: "e" (0x65) sorts before the first byte of "é" (0xC3).
        #expect(sut.keys.map { Array($0.utf8) } == [Array(nfd.utf8), Array(nfc.utf8)])
    }
}
