import CacheLog
import FeedCache
import FeedCacheLog
import Foundation
import Locking
import Testing

/// Conditional loads: the cache's validators go to the remote, and "not modified" refreshes the
/// cache instead of copying the feed again.
@Suite("Revalidating feed loader")
struct RevalidatingFeedLoaderTests {
    static let stored = CacheValidators(etag: #""v1""#, lastModified: "Tue, 01 Dec 2026 09:00:00 GMT")
    static let newer = CacheValidators(etag: #""v2""#, lastModified: "Wed, 02 Dec 2026 09:00:00 GMT")
    static let policy = RecordedPolicy(maxAge: .days(7), contract: "films")

    @Test func load_asksTheRemoteWithTheCachedValidators() async throws {
        let store = InMemoryFeedStore(cachedFeed: try cache(uniqueItems(), validators: Self.stored))
        let remote = RemoteStub(.notModified(Self.stored))

        _ = try await makeSUT(store: store, remote: remote).loadFeed()

        #expect(remote.askedWith == [Self.stored])
    }

    @Test func load_asksWithoutValidatorsWhenNothingIsCached() async throws {
        let remote = RemoteStub(.modified(uniqueItems(), Self.stored))

        _ = try await makeSUT(store: InMemoryFeedStore(), remote: remote).loadFeed()

        #expect(remote.askedWith == [.none])
    }

    @Test func load_asksWithoutValidatorsWhenTheCachedPayloadDoesNotDecode_soTheRemoteSendsTheWholeFeed() async throws {
        let store = InMemoryFeedStore(cachedFeed: CachedFeed(feed: anyData("not a feed"), timestamp: fixedCurrentDate, validators: Self.stored))
        let remote = RemoteStub(.modified(uniqueItems(), Self.newer))

        _ = try await makeSUT(store: store, remote: remote).loadFeed()

        #expect(remote.askedWith == [.none])
    }

    @Test func load_asksWithoutValidatorsWhenTheCacheCannotBeRetrieved() async throws {
        let remote = RemoteStub(.modified(uniqueItems(), Self.newer))

        _ = try await makeSUT(store: FeedStoreSpy(retrieving: .failure(anyError("corrupt"))), remote: remote).loadFeed()

        #expect(remote.askedWith == [.none])
    }

    @Test func load_onModified_savesTheItemsWithTheirNewValidators() async throws {
        let items = uniqueItems()
        let store = InMemoryFeedStore(cachedFeed: try cache(uniqueItems(), validators: Self.stored))

        let loaded = try await makeSUT(store: store, remote: RemoteStub(.modified(items, Self.newer))).loadFeed()

        #expect(loaded == LoadedFeed(items: items, source: .remote, cacheSave: .saved))
        #expect(await store.operations == [
            .retrieve, .replace(try encoded(items), timestamp: fixedCurrentDate, policy: Self.policy, validators: Self.newer),
        ])
    }

    @Test func load_onNotModified_refreshesTheCacheWithItsOwnBytesTimestampedNow() async throws {
        let items = uniqueItems()
        let savedBefore = fixedCurrentDate.adding(days: -3)
        let store = InMemoryFeedStore(cachedFeed: try cache(items, timestamp: savedBefore, validators: Self.stored))

        let loaded = try await makeSUT(store: store, remote: RemoteStub(.notModified(Self.newer))).loadFeed()

        #expect(loaded == LoadedFeed(items: items, source: .remote, cacheSave: .saved, revalidated: true))
        #expect(await store.operations.last == .insert(try encoded(items), timestamp: fixedCurrentDate, policy: Self.policy, validators: Self.newer))
        #expect(await store.cachedFeed?.timestamp == fixedCurrentDate)
    }

    @Test func load_onNotModified_makesAnExpiredCacheFreshAgain() async throws {
        let items = uniqueItems()
        let store = InMemoryFeedStore(cachedFeed: try cache(items, timestamp: fixedCurrentDate.adding(days: -8), validators: Self.stored))
        let local = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }, contract: "films")
        await #expect(throws: CacheUnavailableError.self) { try await local.loadFeed() }

        _ = try await RevalidatingFeedLoader(remote: RemoteStub(.notModified(Self.stored)).answer, cache: local).loadFeed()

        #expect(try await local.loadFeed() == LoadedFeed(items: items, source: .cache(timestamp: fixedCurrentDate)))
    }

    @Test func load_onNotModifiedWithNothingCached_failsAndSavesNothing() async throws {
        let store = InMemoryFeedStore()

        await #expect {
            try await makeSUT(store: store, remote: RemoteStub(.notModified(Self.stored))).loadFeed()
        } throws: { error in
            guard case NotModifiedError.noCache = error else { return false }
            return "\(error)" == "the remote said not modified, but nothing is cached to refresh"
        }
        #expect(await store.operations.allSatisfy { $0 == .retrieve })
    }

    @Test func load_onNotModifiedWithAnUndecodableCache_failsAndSavesNothing() async throws {
        let store = InMemoryFeedStore(cachedFeed: CachedFeed(feed: anyData("not a feed"), timestamp: fixedCurrentDate, validators: Self.stored))

        await #expect {
            try await makeSUT(store: store, remote: RemoteStub(.notModified(Self.stored))).loadFeed()
        } throws: { error in
            guard case NotModifiedError.unreadableCache = error else { return false }
            return "\(error)".hasPrefix("the remote said not modified, but the cached feed cannot be read (")
        }
        #expect(await store.operations.allSatisfy { $0 == .retrieve })
    }

    @Test func load_onNotModified_deliversTheCachedItemsWhenTheRefreshFails_sayingTheyAreNotSaved() async throws {
        let items = uniqueItems()
        let store = FeedStoreSpy(retrieving: .success(try cache(items, validators: Self.stored)), failingWritesWith: anyError("disk full"))

        let loaded = try await makeSUT(store: store, remote: RemoteStub(.notModified(Self.stored))).loadFeed()

        #expect(loaded == LoadedFeed(items: items, source: .remote, cacheSave: .failed(anyError("disk full")), revalidated: true))
    }

    @Test func load_deliversTheRemoteErrorAndSavesNothing() async throws {
        let store = InMemoryFeedStore(cachedFeed: try cache(uniqueItems(), validators: Self.stored))

        await #expect(throws: anyError("offline")) {
            try await makeSUT(store: store, remote: RemoteStub(failingWith: anyError("offline"))).loadFeed()
        }
        #expect(await store.operations == [.retrieve])
    }

    @Test func cacheFirst_withAnExpiredCache_revalidatesAndDeliversTheRefreshedCacheOnce() async throws {
        let items = uniqueItems()
        let store = InMemoryFeedStore(cachedFeed: try cache(items, timestamp: fixedCurrentDate.adding(days: -8), validators: Self.stored))
        let local = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }, contract: "films")
        let remote = RevalidatingFeedLoader(remote: RemoteStub(.notModified(Self.stored)).answer, cache: local)

        let loaded = try await CacheStrategy.cacheFirst.compose(remote: remote, cache: local).loadFeed()

        #expect(loaded == LoadedFeed(items: items, source: .remote, cacheSave: .saved, revalidated: true))
        // Saved once by the refresh, not again by the strategy's cache decorator.
        #expect(await store.operations.filter { $0 != .retrieve }.count == 1)
    }

    @Test func refreshThroughTheLog_isOnePutThatRefersToTheStoredBytes_withTheValidatorsAsMetadata() async throws {
        let database = try await TemporaryCacheLog()
        let store = CacheLogFeedStore(log: database.log, key: "films")
        let items = uniqueItems()
        let first = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }, contract: "films")
        try await first.save(items, validators: Self.stored)
        let later = fixedCurrentDate.adding(days: 8)
        let local = LocalFeedLoader<TestItem>(store: store, currentDate: { later }, contract: "films")
        let remote = RemoteStub(.notModified(Self.newer))

        let loaded = try await RevalidatingFeedLoader(remote: remote.answer, cache: local).loadFeed()

        #expect(loaded.items == items)
        #expect(remote.askedWith == [Self.stored])
        let events = try CacheLogFeedStoreTests.recorded(database.log)
        #expect(events.map(\.kind) == [.delete, .put, .put])
        let entry = try #require(try database.log.entry("films"))
        #expect(entry.seq == 3)
        #expect(entry.payloadSeq == 2)
        #expect(entry.timestamp == later)
        #expect(entry.metadata == ["contract": "films", "etag": #""v2""#, "last-modified": "Wed, 02 Dec 2026 09:00:00 GMT"])
        #expect(try await store.retrieve()?.validators == Self.newer)
    }

    @Test func load_onNotModified_afterAnotherSaveReplacedTheCache_refreshesNothing_andSaysSo() async throws {
        let store = InMemoryFeedStore(cachedFeed: try cache(uniqueItems(), validators: Self.stored))
        let theirs = try encoded(uniqueItems())
        let local = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }, contract: "films")
        // While the remote is asked, another process saves a newer feed under other validators.
        let remote: RevalidatingFeedLoader<TestItem>.Remote = { _ in
            await store.replace(with: theirs, timestamp: fixedCurrentDate, policy: Self.policy, validators: Self.newer)
            return .notModified(Self.stored)
        }

        await #expect(throws: NotModifiedError.self) {
            _ = try await RevalidatingFeedLoader(remote: remote, cache: local).loadFeed()
        }
        // The other save stands; the 304 about the older feed refreshed nothing.
        #expect(await store.operations.filter { $0 != .retrieve } == [
            .replace(theirs, timestamp: fixedCurrentDate, policy: Self.policy, validators: Self.newer),
        ])
    }

    @Test func validators_describeOnlyTheirResource() {
        let validators = CacheValidators(etag: #""v1""#, resource: "https://example.com/a.json")
        #expect(validators.describing("https://example.com/a.json") == validators)
        #expect(validators.describing("https://example.com/b.json") == .none)
        #expect(CacheValidators(etag: #""v1""#).describing("https://example.com/a.json") == .none)
    }

    // MARK: - Helpers

    private func makeSUT(store: any FeedStore, remote: RemoteStub) -> RevalidatingFeedLoader<TestItem> {
        let local = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }, contract: "films")
        return RevalidatingFeedLoader(remote: remote.answer, cache: local)
    }

    private func cache(_ items: [TestItem], timestamp: Date = fixedCurrentDate, validators: CacheValidators) throws -> CachedFeed {
        CachedFeed(feed: try encoded(items), timestamp: timestamp, policy: Self.policy, validators: validators)
    }
}

/// A remote that answers the same each time and records the validators it was asked with.
private final class RemoteStub: Sendable {
    private let result: Result<ConditionalFeed<TestItem>, AnyError>
    private let asked = Locked([CacheValidators]())

    init(_ answer: ConditionalFeed<TestItem>) { result = .success(answer) }
    init(failingWith error: AnyError) { result = .failure(error) }

    var askedWith: [CacheValidators] { asked.withLock { $0 } }

    var answer: RevalidatingFeedLoader<TestItem>.Remote {
        { [self] validators in
            asked.withLock { $0.append(validators) }
            return try result.get()
        }
    }
}
