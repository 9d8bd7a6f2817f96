import FeedCache
import FeedCacheLog
import Foundation
import Testing

/// The ``FeedStore`` implementations `FeedStoreSpecTests` runs `FeedStoreSpecs` against.
///
/// To run the specs against another store, add a case here and make its stores in each factory.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inMemory
    case cacheLog

    var testDescription: String { rawValue }

    /// A new, empty store, not shared with any other test.
    func makeEmptyStore() async throws -> any FeedStore {
        switch self {
        case .inMemory: InMemoryFeedStore()
        case .cacheLog: OwnedCacheLogFeedStore(database: try await TemporaryCacheLog())
        }
    }

    /// A store whose retrieval fails (for CacheLog: a corrupt record).
    func makeStoreFailingRetrieval() async throws -> any FeedStore {
        switch self {
        case .inMemory: return FeedStoreSpy(retrieving: .failure(anyError("corrupt")))
        case .cacheLog:
            let database = try await TemporaryCacheLog()
            let store = OwnedCacheLogFeedStore(database: database)
            try await store.replace(with: FeedStoreSpecs.firstFeed.feed, timestamp: FeedStoreSpecs.firstFeed.timestamp)
            try database.corruptRecord(2)
            return store
        }
    }

    /// A store that holds a cache and refuses every write (for CacheLog: a read-only database).
    func makeStoreFailingWrites() async throws -> any FeedStore {
        switch self {
        case .inMemory: return FeedStoreSpy(retrieving: .success(FeedStoreSpecs.firstFeed), failingWritesWith: anyError("read-only"))
        case .cacheLog:
            let database = try await TemporaryCacheLog(readOnly: true) { log in
                try await CacheLogFeedStore(log: log, key: "feed").replace(
                    with: FeedStoreSpecs.firstFeed.feed, timestamp: FeedStoreSpecs.firstFeed.timestamp)
            }
            return OwnedCacheLogFeedStore(database: database)
        }
    }
}

/// The ``ImageDataStore`` implementations `ImageDataStoreSpecTests` runs `ImageDataStoreSpecs` against.
enum ImageStoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inMemory
    case cacheLog

    var testDescription: String { rawValue }

    /// A new, empty store, not shared with any other test.
    func makeEmptyStore() async throws -> any ImageDataStore {
        switch self {
        case .inMemory: InMemoryImageDataStore()
        case .cacheLog: OwnedCacheLogImageDataStore(database: try await TemporaryCacheLog())
        }
    }
}
