import FeedCache
import Foundation
import Testing

/// A ``LocalFeedLoader`` stores what its coder writes, and reads items back through it.
@Suite("Feed payload coder")
struct FeedPayloadCoderTests {
    /// Items kept as their own text, so the test can see the exact payload.
    static let lines = FeedPayloadCoder<String>(
        encode: { Data($0.joined(separator: "\n").utf8) },
        decode: { payload in
            let text = String(decoding: payload, as: UTF8.self)
            guard !text.hasPrefix("!") else { throw AnyError("not lines") }
            return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        })

    @Test func save_storesTheCodersPayload() async throws {
        let store = InMemoryFeedStore()
        let sut = LocalFeedLoader(store: store, currentDate: { fixedCurrentDate }, coder: Self.lines)

        try await sut.save(["9007199254740993", "1.10"])

        #expect(await store.operations == [
            .replace(Data("9007199254740993\n1.10".utf8), timestamp: fixedCurrentDate, policy: RecordedPolicy(maxAge: .days(7))),
        ])
    }

    @Test func load_decodesThroughTheCoder() async throws {
        let store = InMemoryFeedStore(cachedFeed: CachedFeed(feed: Data("a\nb".utf8), timestamp: fixedCurrentDate))
        let sut = LocalFeedLoader(store: store, currentDate: { fixedCurrentDate }, coder: Self.lines)

        #expect(try await sut.load() == ["a", "b"])
    }

    @Test func load_deliversInvalidCachedFeedErrorWhenTheCoderRefusesThePayload() async throws {
        let store = InMemoryFeedStore(cachedFeed: CachedFeed(feed: Data("!".utf8), timestamp: fixedCurrentDate))
        let sut = LocalFeedLoader(store: store, currentDate: { fixedCurrentDate }, coder: Self.lines)

        await #expect(throws: InvalidCachedFeedError.self) { try await sut.load() }
    }

    @Test func json_isTheDefaultForCodableItems() async throws {
        let items = uniqueItems()
        let store = InMemoryFeedStore()

        try await LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }).save(items)

        #expect(await store.cachedFeed?.feed == (try encoded(items)))
        #expect(try FeedPayloadCoder<TestItem>.json.decode(try encoded(items)) == items)
    }
}
