import CacheLog
import FeedCache
import FeedCacheLog
import Foundation
import Locking
import Testing

/// What the shared specs cannot see: the events the CacheLog store leaves in the log.
@Suite("CacheLog feed store: the log behind the use cases")
struct CacheLogFeedStoreTests {
    static func recorded(_ log: EventLog) throws -> [RecordedEvent] {
        try log.events().compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    @Test func save_isOneAtomicAppendOfDeleteAndPut() async throws {
        let database = try await TemporaryCacheLog()
        let store = CacheLogFeedStore(log: database.log, key: "films")
        let loader = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate })
        try await loader.save(uniqueItems())
        try await loader.save(uniqueItems())
        let events = try Self.recorded(database.log)
        #expect(events.map(\.kind) == [.delete, .put, .delete, .put])
        #expect(events.map(\.reason) == [.replaced, nil, .replaced, nil])
        #expect(events.allSatisfy { $0.recordedAt == events[0].recordedAt || $0.seq > 2 })
        #expect(events[1].timestamp == fixedCurrentDate)
    }

    /// An app's metadata must not claim the package's mark: a payload recorded as the package's
    /// own contract is decoded, and deleted when it does not decode, by a validation that knows
    /// nothing of the app. Nor may it pass off validators the remote never sent.
    @Test func save_recordsNoneOfTheCallersMetadataUnderTheStoresOwnNames_andKeepsTheRest() async throws {
        let database = try await TemporaryCacheLog()
        let forged = [
            "contract": "films", "contract-by": "cachelog", "etag": #""forged""#, "last-modified": "Tue, 01 Dec 2026 10:00:00 GMT",
            "url": "https://example.com/films.json", "cursor": "2", "since": "999",
        ]
        let store = CacheLogFeedStore(log: database.log, key: "films", metadata: { forged })
        let loader = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }, contract: "films")
        try await loader.save(uniqueItems())

        let put = try #require(try Self.recorded(database.log).last)
        #expect(put.kind == .put)
        #expect(put.metadata == ["contract": "films", "cursor": "2"])
        let cached = try #require(try await store.retrieve())
        #expect(cached.policy?.contract == ContractName("films"))
        #expect(cached.policy?.contract?.isBuiltIn == false)
        #expect(cached.validators == .none)

        // The put an app appends itself, in a batch of its own, is held to the same names.
        try await database.log.append(
            CacheLogFeedStore.put(key: "batch", feed: Data("[]".utf8), timestamp: fixedCurrentDate, policy: nil, metadata: forged))
        #expect(try database.log.entry("batch")?.metadata == ["cursor": "2"])
    }

    /// Validators are header bytes read as ISO-8859-1: a save with one that is not ASCII says so,
    /// and reads back as it was given.
    @Test func save_ofValidatorsThatAreNotASCII_recordsTheirCharset_andReadsThemBackExactly() async throws {
        let database = try await TemporaryCacheLog()
        let store = CacheLogFeedStore(log: database.log, key: "films")
        let validators = CacheValidators(etag: "\"\u{FF}\u{FE}\"", lastModified: "Tue, 01 Dec 2026 10:00:00 GMT", resource: "https://example.com/f")
        try await store.insert(Data("[]".utf8), timestamp: fixedCurrentDate, policy: nil, validators: validators)
        #expect(try database.log.entry("films")?.metadata["validator-charset"] == "iso-8859-1")
        #expect(try await store.retrieve()?.validators == validators)

        let ascii = CacheValidators(etag: #""v1""#, resource: "https://example.com/f")
        try await store.insert(Data("[]".utf8), timestamp: fixedCurrentDate + 1, policy: nil, validators: ascii)
        #expect(try database.log.entry("films")?.metadata["validator-charset"] == nil)
        #expect(try await store.retrieve()?.validators == ascii)
    }

    /// A put written when header bytes were read as UTF-8 has no charset entry: its values' UTF-8
    /// bytes are the header's bytes, and read as ISO-8859-1 they go back as those bytes.
    @Test func retrieve_ofValidatorsSavedAsUTF8_readsTheirBytesAsISO88591() async throws {
        let database = try await TemporaryCacheLog()
        try await database.log.append(.put(
            key: "films", payload: Data("[]".utf8), timestamp: fixedCurrentDate,
            metadata: ["etag": "\"é\"", "last-modified": "Tue, 01 Dec 2026 10:00:00 GMT", "url": "https://example.com/f"]))
        let cached = try #require(try await CacheLogFeedStore(log: database.log, key: "films").retrieve())
        #expect(cached.validators == CacheValidators(etag: "\"\u{C3}\u{A9}\"", lastModified: "Tue, 01 Dec 2026 10:00:00 GMT", resource: "https://example.com/f"))
    }

    /// Two loads' stores, as two processes whose clocks disagree would make them: each is told how
    /// far the log had got before its request. The load that began first and saves last is
    /// refused, although its stamp is two days later; a load that began after that save replaces
    /// it, although its stamp is earlier still.
    @Test func aStoreMadeForOneLoad_isRefused_whenALoadThatBeganNoEarlierSavedMeanwhile_whateverTheStamps() async throws {
        let database = try await TemporaryCacheLog()
        let log = database.log
        let first = CacheLogFeedStore(log: log, key: "films", since: try log.lastSeq())
        let second = CacheLogFeedStore(log: log, key: "films", since: try log.lastSeq())
        let behind = fixedCurrentDate - 2 * 86_400
        try await LocalFeedLoader<TestItem>(store: second, currentDate: { behind }).save(uniqueItems())

        // The refusal names the save it kept (seq 2, its request began at seq 0) and this load's start.
        await #expect(throws: NewerCacheError(timestamp: behind, seq: 2, loadBegan: 0, keptLoadBegan: 0)) {
            try await LocalFeedLoader<TestItem>(store: first, currentDate: { fixedCurrentDate }).save(uniqueItems())
        }
        #expect(try log.entry("films")?.timestamp == behind && log.entry("films")?.since == 0)

        let third = CacheLogFeedStore(log: log, key: "films", since: try log.lastSeq())
        try await LocalFeedLoader<TestItem>(store: third, currentDate: { behind - 86_400 }).save(uniqueItems())
        #expect(try log.entry("films")?.timestamp == behind - 86_400 && log.entry("films")?.since == 2)
    }

    @Test func validate_onAnExpiredCache_appendsAnExpireWithTheJudgedTimestampAndMaxAge() async throws {
        let database = try await TemporaryCacheLog()
        let store = CacheLogFeedStore(log: database.log, key: "films")
        try await LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate }).save(uniqueItems())
        let eightDaysLater = fixedCurrentDate + 8 * 86_400
        try await LocalFeedLoader<TestItem>(store: store, currentDate: { eightDaysLater }).validateCache()
        let last = try #require(try Self.recorded(database.log).last)
        #expect(last.kind == .expire)
        #expect(last.timestamp == fixedCurrentDate)
        #expect(last.maxAge == 604_800.0)
        #expect(try await store.retrieve() == nil)
    }

    @Test func validate_onACorruptRecord_deletesItWithTheReason_andTheCacheWorksAgain() async throws {
        let database = try await TemporaryCacheLog()
        let store = CacheLogFeedStore(log: database.log, key: "films")
        let loader = LocalFeedLoader<TestItem>(store: store, currentDate: { fixedCurrentDate })
        try await loader.save(uniqueItems())
        try database.corruptRecord(2)
        await #expect(throws: CacheLogError.self) { _ = try await loader.load() }

        try await loader.validateCache()
        #expect(try Self.recorded(database.log).last?.reason == .retrievalError)
        #expect(try await loader.load() == [])
        let fresh = uniqueItems()
        try await loader.save(fresh)
        #expect(try await loader.load() == fresh)
    }

    @Test func sideEffects_runSerially_theLogHoldsEverySaveWhole() async throws {
        let database = try await TemporaryCacheLog()
        let store = CacheLogFeedStore(log: database.log, key: "films")
        let tasks = 40
        let refused = Locked(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<tasks {
                let now = fixedCurrentDate + TimeInterval(index)
                group.addTask {
                    do {
                        try await LocalFeedLoader<Int>(store: store, currentDate: { now }).save([index])
                    } catch is NewerCacheError {
                        refused.withLock { $0 += 1 }
                    }
                }
                group.addTask { _ = try await LocalFeedLoader<Int>(store: store, currentDate: { now }).load() }
                let later = index % 3 == 0 ? now + 365 * 86_400 : now
                group.addTask { try await LocalFeedLoader<Int>(store: store, currentDate: { later }).validateCache() }
            }
            try await group.waitForAll()
        }
        let events = try Self.recorded(database.log)
        #expect(events.map(\.seq) == Array(1...UInt64(events.count)))
        // Each save is its delete immediately followed by its put: no other event between them.
        let puts = events.filter { $0.kind == .put }
        // Every save either landed whole or was refused for a newer cache, which wrote nothing.
        #expect(puts.count + refused.withLock { $0 } == tasks)
        for put in puts {
            let before = events[Int(put.seq) - 2]
            #expect(before.kind == .delete && before.reason == .replaced)
        }
        // Every expire judged a version that a put had written before it.
        for expire in events where expire.kind == .expire {
            #expect(puts.contains { $0.seq < expire.seq && $0.timestamp == expire.timestamp })
        }
        #expect(try database.log.verify().isClean)
    }
}
