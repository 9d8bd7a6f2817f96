import FeedCache
import Foundation

/// A ``FeedLoader`` that answers the stubbed results in turn (repeating the last one) and counts calls.
actor FeedLoaderSpy: FeedLoader {
    typealias Item = TestItem

    private var results: [Result<LoadedFeed<TestItem>, any Error>]
    private(set) var callCount = 0

    init(_ results: Result<LoadedFeed<TestItem>, any Error>...) {
        self.results = results
    }

    func loadFeed() async throws -> LoadedFeed<TestItem> {
        callCount += 1
        let result = results.count > 1 ? results.removeFirst() : results.first ?? .failure(AnyError("no result stubbed"))
        return try result.get()
    }
}

/// A ``FeedCaching`` that records what it was asked to save.
actor FeedCacheSpy: FeedCaching {
    private(set) var savedFeeds: [[TestItem]] = []
    private let error: AnyError?

    init(failingWith error: AnyError? = nil) {
        self.error = error
    }

    func save(_ items: [TestItem]) throws {
        savedFeeds.append(items)
        if let error { throw error }
    }
}

func remoteFeed(_ items: [TestItem] = uniqueItems()) -> LoadedFeed<TestItem> {
    LoadedFeed(items: items, source: .remote)
}

func cachedFeed(_ items: [TestItem] = uniqueItems(), timestamp: Date = fixedCurrentDate) -> LoadedFeed<TestItem> {
    LoadedFeed(items: items, source: .cache(timestamp: timestamp))
}
