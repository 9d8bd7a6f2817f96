import FeedCache
import Foundation
import Testing

@Suite("Local search loader")
struct LocalSearchLoaderTests {
    @Test func save_cachesEachQueryUnderItsOwnKey() async throws {
        let store = InMemoryKeyedFeedStore()
        let sut = makeSUT(store)

        try await sut.save(uniqueItems(), for: "love")
        try await sut.save(uniqueItems(), for: "peace")

        #expect(store.keys == ["search:love", "search:peace"])
        #expect(sut.key(for: "love") == "search:love")
    }

    @Test func load_deliversTheResultsOfTheQueryAskedForOnly() async throws {
        let (love, peace) = (uniqueItems(), uniqueItems())
        let sut = makeSUT()

        try await sut.save(love, for: "love")
        try await sut.save(peace, for: "peace")

        #expect(try await sut.load(for: "love") == love)
        #expect(try await sut.load(for: "peace") == peace)
    }

    @Test func load_deliversNoResultsForAQueryNeverSaved() async throws {
        let sut = makeSUT()

        try await sut.save(uniqueItems(), for: "love")

        #expect(try await sut.load(for: "Love") == [])
        #expect(try await sut.load(for: "hope") == [])
    }

    @Test func load_deliversResultsOnCacheLessThanThirtyDaysOld() async throws {
        let items = uniqueItems()
        let store = InMemoryKeyedFeedStore()
        try await makeSUT(store, now: fixedCurrentDate.adding(days: -30).adding(seconds: 1)).save(items, for: "love")

        #expect(try await makeSUT(store).load(for: "love") == items)
    }

    @Test func load_deliversNoResultsOnCacheExactlyThirtyDaysOld() async throws {
        let store = InMemoryKeyedFeedStore()
        try await makeSUT(store, now: fixedCurrentDate.adding(days: -30)).save(uniqueItems(), for: "love")

        #expect(try await makeSUT(store).load(for: "love") == [])
    }

    @Test func validateCache_expiresTheQueryAskedForOnly() async throws {
        let store = InMemoryKeyedFeedStore()
        let old = makeSUT(store, now: fixedCurrentDate.adding(days: -31))
        try await old.save(uniqueItems(), for: "love")
        try await old.save(uniqueItems(), for: "peace")

        try await makeSUT(store).validateCache(for: "love")

        #expect(await store.inMemoryStore(for: "search:love").cachedFeed == nil)
        #expect(await store.inMemoryStore(for: "search:peace").cachedFeed != nil)
        #expect(await store.inMemoryStore(for: "search:love").operations.last == .expire(timestamp: fixedCurrentDate.adding(days: -31), maxAge: 2_592_000))
    }

    @Test func keyPrefix_separatesTwoKindsOfSearchSharingOneStore() async throws {
        let store = InMemoryKeyedFeedStore()
        let verses = LocalSearchLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }, keyPrefix: "search:verses:")
        let people = LocalSearchLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }, keyPrefix: "search:people:")

        try await verses.save(uniqueItems(), for: "luke")
        try await people.save(uniqueItems(), for: "luke")

        #expect(store.keys == ["search:people:luke", "search:verses:luke"])
    }

    @Test func loader_composesAsAFallbackReportingTheCacheTimestampOfThatQuery() async throws {
        let items = uniqueItems()
        let sut = makeSUT()
        try await sut.save(items, for: "love")
        let composite = FeedLoaderWithFallbackComposite(
            primary: AnyFeedLoader<TestItem>.remote { throw anyError("offline") },
            fallback: sut.loader(for: "love")
        )

        #expect(try await composite.loadFeed() == LoadedFeed(items: items, source: .cache(timestamp: fixedCurrentDate)))
    }

    private func makeSUT(_ store: InMemoryKeyedFeedStore = InMemoryKeyedFeedStore(), now: Date = fixedCurrentDate) -> LocalSearchLoader<TestItem> {
        LocalSearchLoader(store: store, currentDate: { now })
    }
}
