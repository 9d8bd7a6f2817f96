import FeedCache
import Foundation
import Testing

/// A remote search that serves fixed pages per query and records the requests it received.
actor RemotePagesStub {
    struct Request: Equatable {
        let query: String
        let page: Int?
    }

    private let pagesByQuery: [String: [[TestItem]]]
    private let error: AnyError?
    private(set) var requests: [Request] = []

    init(_ pagesByQuery: [String: [[TestItem]]] = [:], failingWith error: AnyError? = nil) {
        self.pagesByQuery = pagesByQuery
        self.error = error
    }

    func page(query: String, page: Int?) throws -> (items: [TestItem], next: Int?) {
        requests.append(Request(query: query, page: page))
        if let error { throw error }
        let pages = pagesByQuery[query] ?? [[]]
        let index = page ?? 0
        guard pages.indices.contains(index) else { throw AnyError("no page \(index)") }
        return (pages[index], index + 1 < pages.count ? index + 1 : nil)
    }
}

/// A keyed store whose every store refuses writes.
struct ReadOnlyKeyedFeedStore: KeyedFeedStore {
    func store(for key: String) -> any FeedStore {
        FeedStoreSpy(failingWritesWith: AnyError("read-only"))
    }
}

@Suite("Paginated search loader")
struct PaginatedSearchLoaderTests {
    @Test func load_requestsTheFirstPageOfTheQuery() async throws {
        let (sut, remote, _) = makeSUT(RemotePagesStub(["love": [uniqueItems()]]))

        _ = try await sut.load(query: "love")

        #expect(await remote.requests == [.init(query: "love", page: nil)])
    }

    @Test func load_deliversTheFirstPageAndCachesItUnderTheQueryKey() async throws {
        let page = uniqueItems()
        let (sut, _, cache) = makeSUT(RemotePagesStub(["love": [page, uniqueItems()]]))

        let result = try await sut.load(query: "love")

        #expect(result.items == page)
        #expect(result.cacheSave == .saved)
        #expect(try await cache.load(for: "love") == page)
    }

    @Test func load_offersNoLoadMoreOnTheLastPage() async throws {
        let (sut, _, _) = makeSUT(RemotePagesStub(["love": [uniqueItems()]]))

        #expect(try await sut.load(query: "love").loadMore == nil)
    }

    @Test func loadMore_requestsTheNextPageOfTheSameQuery() async throws {
        let (sut, remote, _) = makeSUT(RemotePagesStub(["love": [uniqueItems(), uniqueItems()]]))

        let first = try await sut.load(query: "love")
        _ = try await first.loadMore?()

        #expect(await remote.requests == [.init(query: "love", page: nil), .init(query: "love", page: 1)])
    }

    @Test func loadMore_deliversAndCachesTheMergedListUnderTheSameQueryKey() async throws {
        let (page1, page2, page3) = (uniqueItems(), uniqueItems(), uniqueItems(count: 1))
        let keyed = InMemoryKeyedFeedStore()
        let (sut, _, cache) = makeSUT(RemotePagesStub(["love": [page1, page2, page3]]), keyed)

        let first = try await sut.load(query: "love")
        let second = try #require(try await first.loadMore?())
        let third = try #require(try await second.loadMore?())

        #expect(second.items == page1 + page2)
        #expect(third.items == page1 + page2 + page3)
        #expect(third.loadMore == nil)
        #expect(try await cache.load(for: "love") == page1 + page2 + page3)
        #expect(keyed.keys == ["search:love"])
    }

    @Test func load_paginatesAndCachesTwoQueriesIndependently() async throws {
        let (love, peace) = ([uniqueItems(), uniqueItems()], [uniqueItems()])
        let (sut, _, cache) = makeSUT(RemotePagesStub(["love": love, "peace": peace]))

        let firstLove = try await sut.load(query: "love")
        _ = try await sut.load(query: "peace")
        _ = try await firstLove.loadMore?()

        #expect(try await cache.load(for: "love") == love[0] + love[1])
        #expect(try await cache.load(for: "peace") == peace[0])
    }

    @Test func load_failsOnRemoteErrorAndLeavesTheCacheAlone() async throws {
        let keyed = InMemoryKeyedFeedStore()
        let (sut, _, _) = makeSUT(RemotePagesStub(failingWith: anyError("offline")), keyed)

        await #expect(throws: anyError("offline")) {
            try await sut.load(query: "love")
        }
        #expect(keyed.keys.isEmpty)
    }

    @Test func load_deliversThePageEvenWhenCachingFails_sayingItWasNotSaved() async throws {
        let page = uniqueItems()
        let remote = RemotePagesStub(["love": [page]])
        let cache = LocalSearchLoader<TestItem>(store: ReadOnlyKeyedFeedStore(), currentDate: { fixedCurrentDate })
        let sut = PaginatedSearchLoader<TestItem, Int>(remote: { try await remote.page(query: $0, page: $1) }, cache: cache)

        let result = try await sut.load(query: "love")

        #expect(result.items == page)
        #expect(result.cacheSave == .failed(AnyError("read-only")))
    }

    private func makeSUT(
        _ remote: RemotePagesStub,
        _ keyed: InMemoryKeyedFeedStore = InMemoryKeyedFeedStore()
    ) -> (sut: PaginatedSearchLoader<TestItem, Int>, remote: RemotePagesStub, cache: LocalSearchLoader<TestItem>) {
        let cache = LocalSearchLoader<TestItem>(store: keyed, currentDate: { fixedCurrentDate })
        let sut = PaginatedSearchLoader<TestItem, Int>(remote: { try await remote.page(query: $0, page: $1) }, cache: cache)
        return (sut, remote, cache)
    }
}
