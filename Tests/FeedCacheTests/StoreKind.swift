import FeedCache
import FeedCacheLog
import Foundation
import Testing

/// The ``FeedStore`` implementations `FeedStoreSpecTests` runs `FeedStoreSpecs` against.
///
/// To run the specs against another store, add a case here and make its empty store; a store that
/// can fail gets a case in `FailingStoreKind` too.
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
}

/// The ``FeedStore`` implementations that can be put in a failing condition, which
/// `FeedStoreSpecTests` runs the failure specs of `FeedStoreSpecs` against.
///
/// The in-memory store is not one: none of its operations throws. A failure spec run for it could
/// only run against a stand-in told to fail, which no change to any store could make fail.
enum FailingStoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case cacheLog

    var testDescription: String { rawValue }

    /// A store whose retrieval fails (for CacheLog: a corrupt record).
    func makeStoreFailingRetrieval() async throws -> any FeedStore {
        switch self {
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
