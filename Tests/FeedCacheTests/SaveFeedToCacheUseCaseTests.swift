import FeedCache
import Foundation
import Testing

@Suite("Save feed to cache")
struct SaveFeedToCacheUseCaseTests {
    @Test func init_doesNotMessageStoreUponCreation() async {
        let (_, store) = makeSUT()

        #expect(await store.messages.isEmpty)
    }

    @Test func save_requestsOneAtomicCacheReplacementWithTimestampFromTheClock() async throws {
        let timestamp = fixedCurrentDate
        let items = uniqueItems()
        let (sut, store) = makeSUT(currentDate: timestamp)

        try await sut.save(items)

        #expect(await store.messages == [.replace(try encoded(items), timestamp, RecordedPolicy(maxAge: .days(7)))])
    }

    @Test func save_recordsTheLoadersPolicyAndContractWithTheCache() async throws {
        let store = FeedStoreSpy()
        let sut = LocalFeedLoader<TestItem>(
            store: store, currentDate: { fixedCurrentDate }, policy: .search, contract: "verses")

        try await sut.save([])

        #expect(await store.messages == [.replace(try encoded([]), fixedCurrentDate, RecordedPolicy(maxAge: .days(30), contract: "verses"))])
    }

    @Test func save_requestsReplacementEvenForAnEmptyFeed() async throws {
        let (sut, store) = makeSUT()

        try await sut.save([])

        #expect(await store.messages == [.replace(try encoded([]), fixedCurrentDate, RecordedPolicy(maxAge: .days(7)))])
    }

    @Test func save_failsOnReplacementError() async {
        let replacementError = anyError("replacement")
        let (sut, _) = makeSUT(store: FeedStoreSpy(failingWritesWith: replacementError))

        await #expect(throws: replacementError) {
            try await sut.save(uniqueItems())
        }
    }

    @Test func save_succeedsOnSuccessfulReplacement() async {
        let (sut, _) = makeSUT()

        await #expect(throws: Never.self) {
            try await sut.save(uniqueItems())
        }
    }

    @Test func save_storesItemsThatLoadDeliversBackUnchanged() async throws {
        let items = uniqueItems(count: 3)
        let store = InMemoryFeedStore()
        let sut = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate })

        try await sut.save(items)

        #expect(try await sut.load() == items)
    }

    @Test func save_overridesPreviouslySavedItemsWithOneReplacementEach() async throws {
        let (first, last) = (uniqueItems(), uniqueItems())
        let store = InMemoryFeedStore()
        let sut = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate })

        try await sut.save(first)
        try await sut.save(last)

        #expect(try await sut.load() == last)
        #expect(await store.operations == [
            .replace(try encoded(first), timestamp: fixedCurrentDate, policy: RecordedPolicy(maxAge: .days(7))),
            .replace(try encoded(last), timestamp: fixedCurrentDate, policy: RecordedPolicy(maxAge: .days(7))),
            .retrieve,
        ])
    }

    // MARK: - Helpers

    private func makeSUT(
        currentDate: Date = fixedCurrentDate,
        store: FeedStoreSpy = FeedStoreSpy()
    ) -> (sut: LocalFeedLoader<TestItem>, store: FeedStoreSpy) {
        (LocalFeedLoader(store: store, currentDate: { currentDate }), store)
    }
}
