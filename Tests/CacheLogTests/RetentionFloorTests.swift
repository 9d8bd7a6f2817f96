import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

/// Live caches go only for live caches (Format.md, "Retention"): a size limit below what the
/// database needs whatever is evicted (its floor: each key's history, the checkpoints, LMDB's own
/// pages) keeps every live cache and says why; one above it evicts the least recently saved, and
/// no more. What a pass reports is what changed in the log. On the real file, with a clock the
/// test moves.
@Suite("Retention: the floor, true reports, when a pass is due")
struct RetentionFloorTests {
    private static let day: TimeInterval = 86_400

    private func log(_ directory: TemporaryDirectory, clock: TestClock, automatic: Bool = false) throws -> EventLog {
        try EventLog(path: directory.path("db"), options: EventLog.Options(durability: .unsynced, clock: clock.function, automaticRetention: automatic))
    }

    /// `events` records of history over `keys` keys, a save (delete + put of a few bytes) every
    /// few minutes of clock, each key saved in turn: a long history of small live caches, as the
    /// five apps leave it over months.
    private func longHistory(_ log: EventLog, clock: TestClock, events: Int, keys: Int) async throws {
        var batch: [Event] = []
        for index in 0..<(events / 2) {
            clock.advance(120)
            let key = "key-\(index % keys)"
            batch += [.delete(key: key, reason: .replaced), .put(key: key, payload: Data("v\(index)".utf8), timestamp: clock.date)]
            if batch.count >= 200 {
                try await log.append(batch)
                batch.removeAll()
            }
        }
        if !batch.isEmpty { try await log.append(batch) }
    }

    private func recordCount(_ log: EventLog) throws -> Int { try events(log).count }

    @Test func aLimitBelowTheFloor_keepsEveryLiveCache_letsTheHistoryGo_andSaysWhy() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        try await longHistory(log, clock: clock, events: 100_000, keys: 1_500)
        let live = try log.state().entries
        #expect(live.count == 1_500)

        try await log.setRetentionPolicy(RetentionPolicy(history: 30 * Self.day, sizeLimit: RetentionPolicy.minimumSizeLimit), by: "test")
        let report = try #require(try await log.applyRetention())

        #expect(try log.state().entries == live, "every live cache stays")
        #expect(report.evicted == 0)
        let unmet = try #require(report.unmetLimit, "the report says the limit cannot be met")
        #expect(unmet.limit == RetentionPolicy.minimumSizeLimit && unmet.keys == 1_500 && unmet.floorBytes > 900 * 1024, "\(unmet)")
        #expect(unmet.description.hasPrefix("the history of 1500 keys needs about "), "\(unmet)")
        let left = try recordCount(log)
        #expect(left < 3_000, "the history went: \(left) records left")
        #expect(try log.verify().isClean)

        // A save after it stays live through the next pass.
        clock.advance(60)
        try await log.append([.delete(key: "new", reason: .replaced), .put(key: "new", payload: Data("new".utf8), timestamp: clock.date)])
        _ = try await log.applyRetention()
        #expect(try log.isLive("new"))
        #expect(try log.state().entries.count == 1_501)
    }

    @Test func aKeyTrimmedToAFewRecords_keepsNoIndexPageOfItsOwn_soALongHistoryOfHundredsOfKeysFitsTheTightestLimit() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        try await longHistory(log, clock: clock, events: 100_000, keys: 300)
        let live = try log.state().entries

        try await log.setRetentionPolicy(RetentionPolicy(history: 30 * Self.day, sizeLimit: RetentionPolicy.minimumSizeLimit), by: "test")
        let report = try #require(try await log.applyRetention())

        // Each key's index entries had pages of their own (a page or more each, past the limit
        // for 300 keys); trimmed to one, they fit inside the index's nodes again.
        #expect(report.unmetLimit == nil && report.evicted == 0, "\(report)")
        #expect(try log.state().entries == live)
        let used = try log.retentionStatus().bytesInUse
        #expect(used < RetentionPolicy.minimumSizeLimit / 2, "\(used) bytes in use")
        #expect(try log.verify().isClean)
    }

    @Test func aLimitAboveTheFloor_evictsTheLeastRecentlySaved_andNoMoreThanItNeeds() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        var generator = SeededGenerator(seed: 3)
        for index in 0..<20 {
            clock.advance(60)
            // Incompressible, so that each cache holds about 100 KB of the file.
            try await log.append(.put(key: "cache-\(index)", payload: Data(generator.bytes(100_000)), timestamp: clock.date))
        }
        try await log.setRetentionPolicy(RetentionPolicy(history: nil, sizeLimit: 1 << 20), by: "test")
        let report = try #require(try await log.applyRetention())

        let evictions = try events(log, EventQuery(kinds: [.delete])).filter { $0.reason == .evicted }
        #expect(report.evicted == evictions.count && report.evicted > 0 && report.unmetLimit == nil, "\(report)")
        #expect(evictions.map(\.key) == (0..<evictions.count).map { "cache-\($0)" }, "the least recently saved first")
        #expect(evictions.allSatisfy { $0.metadata["size-limit"] == String(1 << 20) }, "each names the limit")
        #expect(try log.retentionStatus().bytesInUse <= 1 << 20)
        let kept = try log.state().entries.count
        #expect(kept == 20 - evictions.count)
        #expect(kept >= 6, "no more than the margin needs: \(kept) left")
    }

    @Test func aSaveThatFitsTheLimit_besideSmallLiveCaches_andAFloorTheyCannotPayFor_evictsNothing() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        try await longHistory(log, clock: clock, events: 40_000, keys: 300)
        let limit = RetentionPolicy.minimumSizeLimit
        // No history kept: what stays is the floor and the live caches.
        try await log.setRetentionPolicy(RetentionPolicy(history: 0, sizeLimit: limit), by: "test")
        _ = try await log.applyRetention()
        let live = try log.state().entries.map(\.key)
        let floorAndSmallCaches = try log.retentionStatus().bytesInUse

        // Within the limit by itself, past it beside the floor: the 300 small caches would free
        // almost nothing, so evicting them (and the save) would only pay for the floor.
        var generator = SeededGenerator(seed: 12)
        let bytes = min(limit - 64 * 1_024 - 20_000, limit - floorAndSmallCaches + 50_000)
        clock.advance(60)
        try await log.append([.delete(key: "big", reason: .replaced), .put(key: "big", payload: Data(generator.bytes(bytes)), timestamp: clock.date)])
        let report = try #require(try await log.applyRetention())

        #expect(report.evicted == 0, "\(report)")
        #expect(try log.state().entries.map(\.key).sorted() == (live + ["big"]).sorted())
        let unmet = try #require(report.unmetLimit, "\(report)")
        #expect(unmet.liveBytes > bytes && unmet.liveBytes < limit && unmet.floorBytes + unmet.liveBytes > limit, "\(unmet)")
        // Saves after it find the same: no pass for the limit until the database grows.
        clock.advance(60)
        try await log.append([.delete(key: "key-0", reason: .replaced), .put(key: "key-0", payload: Data("again".utf8), timestamp: clock.date)])
        #expect(try !isDue(log, clock))
    }

    @Test func theMostRecentlySavedCache_isNeverEvicted_byThePassAfterIt() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        let limit = RetentionPolicy.minimumSizeLimit
        try await log.setRetentionPolicy(RetentionPolicy(history: nil, sizeLimit: limit), by: "test")
        var generator = SeededGenerator(seed: 13)
        for index in 0..<12 {
            clock.advance(60)
            try await log.append(.put(key: "cache-\(index)", payload: Data(generator.bytes(100_000)), timestamp: clock.date))
            _ = try await log.applyRetention()
        }
        // Nearly the limit by itself (a save that cannot fit beside the database's own pages is
        // refused): the others go for it, and it stays however close to the limit it comes.
        clock.advance(60)
        try await log.append(.put(key: "huge", payload: Data(generator.bytes(limit - 64 * 1_024 - 40_000)), timestamp: clock.date))
        _ = try await log.applyRetention()

        #expect(try log.isLive("huge"))
        #expect(try log.state().entries.map(\.key) == ["huge"])
        #expect(try log.verify().isClean)
    }

    @Test func aSaveThatCannotFitBesideTheFloor_isRefused_andEvictsNothing() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try EventLog(path: directory.path("db"), options: EventLog.Options(clock: clock.function))
        try await log.setRetentionPolicy(RetentionPolicy(history: nil, sizeLimit: 1 << 20), by: "test")
        try await log.append(.put(key: "small", payload: Data("small".utf8), timestamp: clock.date))
        var generator = SeededGenerator(seed: 4)

        await #expect(throws: CacheLogError.self) {
            try await log.append(.put(key: "huge", payload: Data(generator.bytes(1 << 20)), timestamp: clock.date))
        }
        #expect(try log.isLive("small") && !(try log.isLive("huge")))
    }

    // MARK: reports

    @Test func applyRetention_reportsWhatItRemoved_finishingAPassUnderWayFromWhereItStood() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        try await longHistory(log, clock: clock, events: 20_000, keys: 50)
        clock.advance(10 * Self.day)
        try await log.setRetentionPolicy(RetentionPolicy(history: Self.day, sizeLimit: nil), by: "test")
        // One step of a pass, as a writer's background slice (or a process killed after it) leaves it.
        try stepOnce(log, at: clock.date)
        let stepped = try #require(try log.retentionStatus().lastPass)
        #expect(!stepped.finished && stepped.removed > 0)
        let before = try recordCount(log)

        let report = try #require(try await log.applyRetention())

        let went = before - (try recordCount(log))
        #expect(report.removed == went && went > 0, "reported \(report.removed), \(went) went")
        #expect(report.finished)
    }

    /// One step of a retention pass in its own write transaction.
    private func stepOnce(_ log: EventLog, at now: Date) throws {
        _ = try log.environment.write { txn in try Retention(tables: log.tables).step(txn, now: now) }
    }

    // MARK: when a pass is due

    private func finishedPass(_ clock: TestClock) async throws -> (EventLog, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let log = try log(directory, clock: clock)
        try await log.append(.put(key: "films", payload: Data("films".utf8), timestamp: clock.date))
        _ = try await log.applyRetention()
        return (log, directory)
    }

    private func isDue(_ log: EventLog, _ clock: TestClock) throws -> Bool {
        try log.environment.read { txn in
            let retention = Retention(tables: log.tables)
            return try retention.isDue(txn, now: clock.date, policy: try retention.policy(txn).policy)
        }
    }

    @Test func aNewlyRecordedPolicy_makesAPassDue_atOnce() async throws {
        let clock = TestClock()
        let (log, _) = try await finishedPass(clock)
        #expect(try !isDue(log, clock))
        try await log.setRetentionPolicy(RetentionPolicy(history: Self.day, sizeLimit: nil), by: "test")
        #expect(try isDue(log, clock), "a policy recorded since the last pass began")
    }

    @Test func anHourSinceTheLastPass_makesOneDue_onItsOwn() async throws {
        let clock = TestClock()
        let (log, _) = try await finishedPass(clock)
        clock.advance(RetentionTuning.timeBetweenPasses - 1)
        #expect(try !isDue(log, clock))
        clock.advance(1)
        #expect(try isDue(log, clock), "an hour passed, nothing else changed")
    }

    @Test func makingRoomForASave_countsTheSavesOwnSize() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try EventLog(path: directory.path("db"), options: EventLog.Options(durability: .unsynced, clock: clock.function))
        try await log.setRetentionPolicy(RetentionPolicy(history: nil, sizeLimit: 1 << 20), by: "test")
        var generator = SeededGenerator(seed: 9)
        // Under the limit, with room for no more than another few of these.
        for index in 0..<8 {
            clock.advance(60)
            try await log.append(.put(key: "cache-\(index)", payload: Data(generator.bytes(100_000)), timestamp: clock.date))
        }
        let before = try log.retentionStatus().bytesInUse
        #expect(before < 1 << 20)
        // This save alone takes the database past the limit: room is made before it commits.
        clock.advance(60)
        try await log.append(.put(key: "big", payload: Data(generator.bytes(300_000)), timestamp: clock.date))
        #expect(try log.retentionStatus().bytesInUse <= 1 << 20, "room was made for the save itself")
        #expect(try log.isLive("big"))
    }
}
