import CLMDB
import CacheLog
import FeedCache
import FeedCacheLog
import Foundation
import TestSupport
import Testing
@testable import CacheLog

/// A CacheLog database in a directory of its own, removed when the last store using it is gone.
final class TemporaryCacheLog: @unchecked Sendable {
    let directory: URL
    let log: EventLog

    /// `clock` stamps the events' `recordedAt` (of a writable log).
    init(readOnly: Bool = false, seed: ((EventLog) async throws -> Void)? = nil, clock: @escaping @Sendable () -> Date = { Date() }) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("feedcache-tests-\(UUID().uuidString)")
        if let seed, readOnly {
            // Write first with a writable instance, then reopen the same directory read-only.
            try await Self.seed(directory.path, seed)
            log = try EventLog(path: directory.path, options: .init(readOnly: true))
        } else {
            log = try EventLog(path: directory.path, options: .init(clock: clock))
            if let seed { try await seed(log) }
        }
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    private static func seed(_ path: String, _ seed: (EventLog) async throws -> Void) async throws {
        do {
            let writer = try EventLog(path: path)
            try await seed(writer)
        }
        // The writer's environment closes once its queue lets go of it; wait for that.
        _ = try await eventually { !OpenPaths.isOpen(path) }
    }

    /// Flips a byte inside the stored record `seq` with the raw LMDB API, as disk corruption would.
    func corruptRecord(_ seq: UInt64) throws {
        let events = log.environment.tables.events.handle
        try RawLMDB.write(environment: log.environment.raw) { txn in
            let key = withUnsafeBytes(of: seq.bigEndian) { Array($0) }
            var record = try #require(RawLMDB.get(txn, events, key))
            record[record.count - 6] ^= 0xFF
            try #require(RawLMDB.put(txn, events, key, record) == MDB_SUCCESS)
        }
    }
}

/// The CacheLog-backed store, owning its temporary database for as long as the test holds it.
struct OwnedCacheLogFeedStore: FeedStore {
    let database: TemporaryCacheLog
    var store: CacheLogFeedStore { CacheLogFeedStore(log: database.log, key: "feed") }

    func deleteCachedFeed(reason: FeedCache.DeletionReason) async throws { try await store.deleteCachedFeed(reason: reason) }
    func insert(_ feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) async throws {
        try await store.insert(feed, timestamp: timestamp, policy: policy, validators: validators)
    }
    func replace(with feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) async throws {
        try await store.replace(with: feed, timestamp: timestamp, policy: policy, validators: validators)
    }
    func expireCachedFeed(timestamp: Date, maxAge: TimeInterval) async throws { try await store.expireCachedFeed(timestamp: timestamp, maxAge: maxAge) }
    func retrieve() async throws -> CachedFeed? { try await store.retrieve() }
}

struct OwnedCacheLogImageDataStore: ImageDataStore {
    let database: TemporaryCacheLog
    var store: CacheLogImageDataStore { CacheLogImageDataStore(log: database.log) }

    func insert(_ data: Data, for url: URL) async throws { try await store.insert(data, for: url) }
    func retrieve(dataForURL url: URL) async throws -> Data? { try await store.retrieve(dataForURL: url) }
}
