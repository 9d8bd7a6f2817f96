import FeedCache
import Foundation
import Locking
import Seeding
import Testing

/// The ``FeedStore`` contract as runnable specs, written once and run against every store.
///
/// Each spec takes the store under test in the condition its name says (empty unless told
/// otherwise) and records failures at the caller's source location. Run them through a
/// parameterized suite, like `FeedStoreSpecTests` over `StoreKind`.
enum FeedStoreSpecs {
    /// Timestamps with sub-second parts a `Date()` has, which seconds since 1970 cannot hold
    /// (each comes back one unit in the last place apart from that conversion).
    static let firstFeed = CachedFeed(feed: Data("first feed".utf8), timestamp: Date(timeIntervalSinceReferenceDate: 786_240_000.000_000_1))
    static let secondFeed = CachedFeed(feed: Data("second feed".utf8), timestamp: Date(timeIntervalSinceReferenceDate: 786_326_400.987_654_3))

    /// What `sut` delivers, without when it recorded the save: a store that keeps history knows
    /// that moment (``CachedFeed/recordedAt``), one that does not leaves it `nil`, and the specs
    /// hold every store to the rest.
    private static func retrieved(_ sut: some FeedStore) async throws -> CachedFeed? {
        try await sut.retrieve().map {
            CachedFeed(feed: $0.feed, timestamp: $0.timestamp, policy: $0.policy, validators: $0.validators)
        }
    }

    // MARK: - Retrieve

    static func retrieve_deliversEmptyOnEmptyCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(try await retrieved(sut) == nil, sourceLocation: sourceLocation)
    }

    static func retrieve_hasNoSideEffectsOnEmptyCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(try await retrieved(sut) == nil, sourceLocation: sourceLocation)
        #expect(try await retrieved(sut) == nil, sourceLocation: sourceLocation)
    }

    static func retrieve_deliversFoundValuesOnNonEmptyCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sut.insert(firstFeed.feed, timestamp: firstFeed.timestamp)

        #expect(try await retrieved(sut) == firstFeed, sourceLocation: sourceLocation)
    }

    static func retrieve_hasNoSideEffectsOnNonEmptyCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sut.insert(firstFeed.feed, timestamp: firstFeed.timestamp)

        #expect(try await retrieved(sut) == firstFeed, sourceLocation: sourceLocation)
        #expect(try await retrieved(sut) == firstFeed, sourceLocation: sourceLocation)
    }

    /// A timestamp comes back `==` to the one inserted, whatever its sub-second part: 1,000 random
    /// dates from 1970 to 2100.
    static func retrieve_deliversTheTimestampAsInserted_atRandomInstants(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        var generator = SeededGenerator(seed: 1_000)
        for _ in 0..<1_000 {
            let timestamp = generator.date()
            try await sut.replace(with: firstFeed.feed, timestamp: timestamp)

            let delivered = try await retrieved(sut)?.timestamp
            #expect(delivered == timestamp, "\(timestamp.timeIntervalSinceReferenceDate) came back as \(delivered?.timeIntervalSinceReferenceDate ?? .nan)", sourceLocation: sourceLocation)
        }
    }

    /// Payloads are opaque bytes: empty, binary (every byte value) and large ones come back intact.
    static func retrieve_deliversPayloadsByteForByte(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let binary = Data((0...255).map { UInt8($0) })
        let large = Data((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
        for payload in [Data(), binary, large] {
            try await sut.replace(with: payload, timestamp: firstFeed.timestamp)

            #expect(try await retrieved(sut) == CachedFeed(feed: payload, timestamp: firstFeed.timestamp), "payload of \(payload.count) bytes", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Insert

    static func insert_deliversNoErrorOnEmptyCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        await #expect(throws: Never.self, sourceLocation: sourceLocation) {
            try await sut.insert(firstFeed.feed, timestamp: firstFeed.timestamp)
        }
    }

    static func insert_deliversNoErrorOnNonEmptyCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sut.insert(firstFeed.feed, timestamp: firstFeed.timestamp)

        await #expect(throws: Never.self, sourceLocation: sourceLocation) {
            try await sut.insert(secondFeed.feed, timestamp: secondFeed.timestamp)
        }
    }

    static func insert_overridesPreviouslyInsertedCacheValues(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sut.insert(firstFeed.feed, timestamp: firstFeed.timestamp)
        try await sut.insert(secondFeed.feed, timestamp: secondFeed.timestamp)

        #expect(try await retrieved(sut) == secondFeed, sourceLocation: sourceLocation)
    }

    static func insert_deliversValuesInsertedAfterTheCacheWasDeleted(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sut.insert(firstFeed.feed, timestamp: firstFeed.timestamp)
        try await sut.deleteCachedFeed(reason: .explicit)
        try await sut.insert(secondFeed.feed, timestamp: secondFeed.timestamp)

        #expect(try await retrieved(sut) == secondFeed, sourceLocation: sourceLocation)
    }

    // MARK: - Replace

    static func replace_deliversNoErrorOnEmptyCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        await #expect(throws: Never.self, sourceLocation: sourceLocation) {
            try await sut.replace(with: firstFeed.feed, timestamp: firstFeed.timestamp)
        }
        #expect(try await retrieved(sut) == firstFeed, sourceLocation: sourceLocation)
    }

    static func replace_deliversNoErrorOnNonEmptyCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sut.replace(with: firstFeed.feed, timestamp: firstFeed.timestamp)

        await #expect(throws: Never.self, sourceLocation: sourceLocation) {
            try await sut.replace(with: secondFeed.feed, timestamp: secondFeed.timestamp)
        }
    }

    static func replace_overridesPreviouslyInsertedCacheValues(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sut.insert(firstFeed.feed, timestamp: firstFeed.timestamp)
        try await sut.replace(with: secondFeed.feed, timestamp: secondFeed.timestamp)

        #expect(try await retrieved(sut) == secondFeed, sourceLocation: sourceLocation)
    }

    // MARK: - Delete

    static func delete_deliversNoErrorOnEmptyCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        await #expect(throws: Never.self, sourceLocation: sourceLocation) {
            try await sut.deleteCachedFeed(reason: .explicit)
        }
    }

    static func delete_hasNoSideEffectsOnEmptyCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sut.deleteCachedFeed(reason: .explicit)

        #expect(try await retrieved(sut) == nil, sourceLocation: sourceLocation)
    }

    static func delete_deliversNoErrorOnNonEmptyCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sut.insert(firstFeed.feed, timestamp: firstFeed.timestamp)

        await #expect(throws: Never.self, sourceLocation: sourceLocation) {
            try await sut.deleteCachedFeed(reason: .explicit)
        }
    }

    static func delete_emptiesPreviouslyInsertedCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for reason in DeletionReason.allCases {
            try await sut.insert(firstFeed.feed, timestamp: firstFeed.timestamp)
            try await sut.deleteCachedFeed(reason: reason)

            #expect(try await retrieved(sut) == nil, "reason \(reason)", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Expire

    static func expire_deliversNoErrorOnEmptyCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        await #expect(throws: Never.self, sourceLocation: sourceLocation) {
            try await sut.expireCachedFeed(timestamp: firstFeed.timestamp, maxAge: 604_800)
        }
    }

    static func expire_hasNoSideEffectsOnEmptyCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sut.expireCachedFeed(timestamp: firstFeed.timestamp, maxAge: 604_800)

        #expect(try await retrieved(sut) == nil, sourceLocation: sourceLocation)
    }

    static func expire_emptiesPreviouslyInsertedCache(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sut.insert(firstFeed.feed, timestamp: firstFeed.timestamp)
        try await sut.expireCachedFeed(timestamp: firstFeed.timestamp, maxAge: 604_800)

        #expect(try await retrieved(sut) == nil, sourceLocation: sourceLocation)
    }

    // MARK: - Concurrency

    /// Many tasks save, load and validate through ``LocalFeedLoader`` at once, over a cache saved
    /// before they start; the loads go on until every save is done. Every load sees one whole
    /// saved feed: never an empty cache (a replace is atomic) and never a torn one. The cache ends
    /// up holding one saved feed with its own timestamp (a payload never paired with another
    /// save's timestamp).
    ///
    /// Every cache stays fresh, so that validation reads concurrently but removes nothing. For a
    /// store that keeps a history, check the order of its events after calling this.
    static func sideEffects_runSerially(_ sut: some FeedStore, tasks: Int = 30, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let base = firstFeed.timestamp
        @Sendable func timestamp(of save: Int) -> Date { base + TimeInterval(save) }
        @Sendable func items(of save: Int) -> [Int] { [save, save, save] }
        @Sendable func loader(at save: Int) -> LocalFeedLoader<Int> {
            LocalFeedLoader<Int>(store: sut, currentDate: { timestamp(of: save) })
        }
        let saved = Set((0...tasks).map(items(of:)))
        try await loader(at: 0).save(items(of: 0))
        let savesDone = Locked(0)

        let loaded = try await withThrowingTaskGroup(of: [[Int]].self) { group in
            for index in 1...tasks {
                group.addTask {
                    do {
                        try await loader(at: index).save(items(of: index))
                    } catch is NewerCacheError {
                        // A store that compares stamps refuses a save older than the live one;
                        // the newer save it kept is whole, which is what this spec checks.
                    }
                    savesDone.withLock { $0 += 1 }
                    return []
                }
                group.addTask {
                    var loaded: [[Int]] = []
                    repeat {
                        try Task.checkCancellation()
                        loaded.append(try await loader(at: tasks).load())
                        await Task.yield()
                    } while savesDone.withLock({ $0 }) < tasks
                    return loaded
                }
                group.addTask {
                    try await loader(at: tasks).validateCache()
                    return []
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }

        #expect(loaded.count >= tasks, sourceLocation: sourceLocation)
        let torn = loaded.filter { !saved.contains($0) }
        #expect(torn.count == 0, "of \(loaded.count) loads, these saw no feed or a torn one: \(torn.prefix(5))…", sourceLocation: sourceLocation)
        let final = try #require(try await sut.retrieve(), "the cache ended empty", sourceLocation: sourceLocation)
        let items = try JSONDecoder().decode([Int].self, from: final.feed)
        #expect(saved.contains(items), "the cache holds a torn feed: \(items)", sourceLocation: sourceLocation)
        #expect(items.first.map(timestamp(of:)) == final.timestamp, "payload and timestamp come from different saves", sourceLocation: sourceLocation)
    }

    // MARK: - Failure (the store is given already in the failing condition)

    /// `sut` fails to retrieve (for example it holds a corrupt record).
    static func retrieve_deliversFailureOnRetrievalError(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        await #expect(throws: (any Error).self, sourceLocation: sourceLocation) {
            try await sut.retrieve()
        }
    }

    /// `sut` fails to retrieve (for example it holds a corrupt record): twice, with the same
    /// error ("error twice returns the same error", the verse search store's requirements).
    static func retrieve_hasNoSideEffectsOnFailure(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let first = await #expect(throws: (any Error).self, sourceLocation: sourceLocation) { try await sut.retrieve() }
        let second = await #expect(throws: (any Error).self, sourceLocation: sourceLocation) { try await sut.retrieve() }
        #expect(first.map { type(of: $0) } == second.map { type(of: $0) }, sourceLocation: sourceLocation)
        #expect(first.map { String(reflecting: $0) } == second.map { String(reflecting: $0) }, sourceLocation: sourceLocation)
    }

    /// `sut` refuses writes (for example a read-only database).
    static func insert_deliversErrorOnInsertionError(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        await #expect(throws: (any Error).self, sourceLocation: sourceLocation) {
            try await sut.insert(secondFeed.feed, timestamp: secondFeed.timestamp)
        }
    }

    /// `sut` refuses writes (for example a read-only database).
    static func insert_hasNoSideEffectsOnInsertionError(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await expectNoSideEffects(on: sut, sourceLocation: sourceLocation) {
            try await sut.insert(secondFeed.feed, timestamp: secondFeed.timestamp)
        }
    }

    /// `sut` refuses writes (for example a read-only database).
    static func replace_deliversErrorOnReplacementError(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        await #expect(throws: (any Error).self, sourceLocation: sourceLocation) {
            try await sut.replace(with: secondFeed.feed, timestamp: secondFeed.timestamp)
        }
    }

    /// `sut` refuses writes (for example a read-only database). A failed replace keeps the old cache.
    static func replace_hasNoSideEffectsOnReplacementError(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await expectNoSideEffects(on: sut, sourceLocation: sourceLocation) {
            try await sut.replace(with: secondFeed.feed, timestamp: secondFeed.timestamp)
        }
    }

    /// `sut` holds a cache and refuses writes (for example a read-only database).
    static func delete_deliversErrorOnDeletionError(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        await #expect(throws: (any Error).self, sourceLocation: sourceLocation) {
            try await sut.deleteCachedFeed(reason: .explicit)
        }
    }

    /// `sut` holds a cache and refuses writes (for example a read-only database).
    static func delete_hasNoSideEffectsOnDeletionError(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await expectNoSideEffects(on: sut, sourceLocation: sourceLocation) {
            try await sut.deleteCachedFeed(reason: .explicit)
        }
    }

    /// `sut` holds a cache and refuses writes (for example a read-only database).
    static func expire_deliversErrorOnExpiryError(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let cached = try await sut.retrieve()
        await #expect(throws: (any Error).self, sourceLocation: sourceLocation) {
            try await sut.expireCachedFeed(timestamp: cached?.timestamp ?? firstFeed.timestamp, maxAge: 604_800)
        }
    }

    /// `sut` holds a cache and refuses writes (for example a read-only database).
    static func expire_hasNoSideEffectsOnExpiryError(_ sut: some FeedStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let cached = try await sut.retrieve()
        try await expectNoSideEffects(on: sut, sourceLocation: sourceLocation) {
            try await sut.expireCachedFeed(timestamp: cached?.timestamp ?? firstFeed.timestamp, maxAge: 604_800)
        }
    }

    private static func expectNoSideEffects(
        on sut: some FeedStore,
        sourceLocation: SourceLocation,
        of failingOperation: () async throws -> Void
    ) async throws {
        let before = try await sut.retrieve()
        await #expect(throws: (any Error).self, sourceLocation: sourceLocation) { try await failingOperation() }
        #expect(try await sut.retrieve() == before, sourceLocation: sourceLocation)
    }
}
