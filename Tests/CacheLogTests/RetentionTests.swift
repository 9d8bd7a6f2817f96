import CLMDB
import Foundation
import TestSupport
import Testing
@testable import CacheLog

/// The retention policy, applied by the writer as appends go (``RetentionPolicy``): history
/// outside a key's window goes, the version each key's history starts from stays, live caches
/// stay, and over the size limit the oldest history then the least recently saved caches go,
/// each of those with an event that says why. Checked on the real LMDB file, on a clock the test
/// moves, against what the test saved.
@Suite("Retention")
struct RetentionTests {
    private static let day: TimeInterval = 86_400

    private func log(_ directory: TemporaryDirectory, clock: TestClock, automatic: Bool = true) throws -> EventLog {
        try EventLog(path: directory.path("db"), options: EventLog.Options(durability: .unsynced, clock: clock.function, automaticRetention: automatic))
    }

    /// A save as the feed cache makes it: delete, then put.
    private func save(_ log: EventLog, _ key: String, _ text: String, at clock: TestClock, metadata: [String: String] = [:]) async throws {
        try await log.append([.delete(key: key, reason: .replaced), .put(key: key, payload: payload(text), timestamp: clock.date, metadata: metadata)])
    }

    private func puts(_ log: EventLog, key: String) throws -> [RecordedEvent] {
        try events(log, EventQuery(key: key, kinds: [.put], includePayload: true))
    }

    @Test func window_removesEachKeysHistoryOlderThanIt_keepsEveryRecordInside_andTheVersionTheHistoryStartsFrom() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        try await log.setRetentionPolicy(RetentionPolicy(history: 10 * Self.day, sizeLimit: nil), by: "test")
        var saved: [(at: Date, text: String)] = []
        for hour in stride(from: 0, to: 30 * 24, by: 6) {
            clock.set(Date(timeIntervalSince1970: 1_800_000_000 + Double(hour) * 3600))
            let text = "films version \(hour)"
            try await save(log, "films", text, at: clock)
            saved.append((clock.date, text))
        }
        try await log.applyRetention()

        let kept = try puts(log, key: "films")
        let windowStart = clock.date.addingTimeInterval(-10 * Self.day)
        let inside = saved.filter { $0.at >= windowStart }
        // Every save inside the window, and the one live when the window starts: nothing older.
        #expect(kept.map { String(decoding: $0.payload ?? Data(), as: UTF8.self) } == ([saved[saved.count - inside.count - 1]] + inside).map(\.text))
        #expect(try log.entry("films")?.timestamp == saved.last?.at)
        #expect(try log.verify().isClean)
        // The history starts at the version live when the window starts: its put.
        #expect(try log.historyStart(of: "films") == kept.first?.seq)
        #expect(try events(log, EventQuery(key: "films")).first?.seq == kept.first?.seq)
    }

    /// A key whose history would start from a record that is gone keeps its history: the fold
    /// from the compaction base, which holds the key live at an earlier put, would otherwise make
    /// it live at a put retention let go (the soak found this after a planted delete).
    @Test func aHistoryThatWouldStartFromAMissingRecord_staysWhole_soTheFoldNeverNamesAPutThatWent() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock, automatic: false)
        try await save(log, "films", "first", at: clock)        // 1 delete, 2 put
        try await save(log, "genres", "genres", at: clock)      // 3, 4: the compaction base is 4
        _ = try await log.compact(before: .seq(5))
        clock.advance(Self.day)
        try await save(log, "films", "second", at: clock)       // 5 delete, 6 put
        try await save(log, "genres", "newer", at: clock)       // 7, 8
        try RawLMDB.write(log) { txn, tables in RawLMDB.delete(txn, tables.events, RawLMDB.seqKey(6)) }
        _ = try await log.rebuildState()
        #expect(try log.verify().problems.map(\.seq) == [6], "the missing put is the one damage")

        clock.advance(40 * Self.day)
        try await log.setRetentionPolicy(RetentionPolicy(history: Self.day, sizeLimit: nil), by: "test")
        try await log.applyRetention()

        #expect(try events(log, EventQuery(key: "films")).map(\.seq) == [2, 5], "films keeps its history")
        let problems = try log.verify().problems
        #expect(problems.allSatisfy { $0.seq == 6 }, "retention made no damage of its own: \(problems)")
    }

    @Test func overrides_giveKeysByPrefixOrContractTheirOwnWindow_noHistoryForImages_moreForAFeed() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        try await log.setRetentionPolicy(RetentionPolicy(history: 10 * Self.day, sizeLimit: nil, overrides: [
            .init(.keyPrefix("image:"), history: 0), .init(.contract("films"), history: 40 * Self.day),
        ]), by: "test")
        for day in 0..<30 {
            clock.set(Date(timeIntervalSince1970: 1_800_000_000 + Double(day) * Self.day))
            try await save(log, "image:poster", "poster \(day)", at: clock)
            try await save(log, "films", "films \(day)", at: clock, metadata: ["contract": "films"])
            try await save(log, "genres", "genres \(day)", at: clock)
        }
        // The pass runs a little after the last saves, as the writer's would.
        clock.advance(60)
        try await log.applyRetention()

        #expect(try puts(log, key: "image:poster").map(\.timestamp) == [clock.date.addingTimeInterval(-60)], "an image keeps no history")
        #expect(try puts(log, key: "films").count == 30, "films keep 40 days")
        #expect(try puts(log, key: "genres").count == 11, "genres keep 10 days and the version before")
        #expect(try log.verify().isClean)
    }

    @Test func stateAsOfATrimmedPoint_leavesTrimmedKeysOut_andNamesThem_oneKeyAsOfItSaysSo() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        try await log.setRetentionPolicy(RetentionPolicy(history: 5 * Self.day, sizeLimit: nil, overrides: [.init(.keyPrefix("keep"), history: 100 * Self.day)]), by: "test")
        for day in 0..<20 {
            clock.set(Date(timeIntervalSince1970: 1_800_000_000 + Double(day) * Self.day))
            try await save(log, "films", "films \(day)", at: clock)
            try await save(log, "keep", "keep \(day)", at: clock)
        }
        clock.advance(60)
        try await log.applyRetention()

        // The day after the first: both keys were live then.
        let dayOne = LogPosition.date(Date(timeIntervalSince1970: 1_800_000_000 + Self.day + 3600))
        let early = try log.state(asOf: dayOne)
        #expect(early.trimmed == ["films"])
        #expect(early.entries.map(\.key) == ["keep"])
        #expect(throws: CacheLogError.self) { try log.entry("films", asOf: dayOne) }
        #expect(try log.entry("keep", asOf: dayOne).entry != nil)
        #expect(try log.state().entries.map(\.key) == ["films", "keep"])
        #expect(try log.state().trimmed.isEmpty)
    }

    @Test func policy_isRecordedInTheLog_readByEveryProcess_andADatabaseWithoutOneFollowsTheDefault() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        do {
            let log = try log(directory, clock: clock)
            #expect(try log.retentionPolicy().policy == .default)
            #expect(try log.retentionPolicy().seq == nil)
            let policy = RetentionPolicy(history: 3 * Self.day, sizeLimit: 8 << 20, overrides: [.init(.contract("films"), history: 90 * Self.day)])
            let seq = try await log.setRetentionPolicy(policy, by: "cachelog retention (root)")
            #expect(try log.retentionPolicy() == (policy, seq))
            await #expect(throws: CacheLogError.invalidRetention(detail: "the size limit must be at least 1 MiB")) {
                try await log.setRetentionPolicy(RetentionPolicy(history: nil, sizeLimit: 0), by: "test")
            }
        }
        let reopened = try log(directory, clock: clock)
        let recorded = try #require(try events(reopened, EventQuery(kinds: [.retention])).first)
        #expect(recorded.retention?.by == "cachelog retention (root)")
        #expect(try recorded.retention?.policy == reopened.retentionStatus().policy)
        #expect(try reopened.verify().isClean)
    }

    @Test func sizeLimit_trimsTheOldestHistoryFirst_thenEvictsTheLeastRecentlySaved_withAnEventThatSaysWhy() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        let limit = 2 << 20
        try await log.setRetentionPolicy(RetentionPolicy(history: nil, sizeLimit: limit), by: "test")
        var generator = SystemRandomNumberGenerator()
        // Incompressible payloads of 100 KB: 40 keys do not fit 2 MiB.
        for index in 0..<40 {
            clock.advance(60)
            let bytes = Data((0..<100_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
            try await log.append([.delete(key: "k\(index)", reason: .replaced), .put(key: "k\(index)", payload: bytes, timestamp: clock.date)])
            let used = try log.retentionStatus().bytesInUse
            #expect(used <= limit + limit / 10, "at save \(index): \(used) bytes in use")
        }
        let evictions = try events(log, EventQuery(kinds: [.delete])).filter { $0.reason == .evicted }
        #expect(!evictions.isEmpty)
        let live = try log.state().entries.map(\.key)
        #expect(live.contains("k39"), "the newest save is live")
        #expect(evictions.allSatisfy { !live.contains($0.key) })
        // The least recently saved went first.
        let evictedIndexes = evictions.compactMap { Int($0.key.dropFirst()) }
        #expect(evictedIndexes == evictedIndexes.sorted())
        #expect(try log.verify().isClean)
    }

    /// LMDB never shrinks its file, and it writes a large record only into a run of free pages
    /// long enough for it: when the free pages are too scattered, it writes at the file's end, and
    /// the file passes the limit with fewer pages in use. So a pass trims the pages in use below
    /// the margin under the limit by as much again as the file has grown past it.
    @Test func aFileGrownPastTheSizeLimit_isTrimmedBelowTheMarginByAsMuchAgain() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        try await log.setRetentionPolicy(RetentionPolicy(history: nil, sizeLimit: nil), by: "test")
        var generator = SystemRandomNumberGenerator()
        // 20,000 versions of 200 keys, incompressible: about 6 MB of history, and a pass trims
        // it in steps of a tenth of what is left.
        for _ in 0..<100 {
            clock.advance(60)
            try await log.append((0..<200).map { key in
                .put(key: "k\(key)", payload: Data((0..<200).map { _ in UInt8.random(in: 0...255, using: &generator) }), timestamp: clock.date)
            })
        }
        let file = try log.stats().mapUsed
        // A limit the file is a fifth past (in whole KiB, as a policy takes it).
        let limit = file * 4 / 5 / 1_024 * 1_024
        let overrun = file - limit
        let margin = Int(Double(limit) * 0.9)
        try #require(margin - overrun > limit / 2, "the target stays above its floor of half the limit")

        try await log.setRetentionPolicy(RetentionPolicy(history: nil, sizeLimit: limit), by: "test")
        try await log.applyRetention()

        let used = try log.retentionStatus().bytesInUse
        #expect(used <= margin - overrun, "\(used) bytes in use; the margin is \(margin), the file \(overrun) bytes past the limit")
        #expect(used > margin - overrun - file / 6, "trimmed to the target, not far past it: \(used) bytes in use")
        #expect(try (0..<200).allSatisfy { try log.retrieve("k\($0)") != nil }, "every key's live version stays")
        #expect(try log.verify().isClean)
    }

    @Test func aSaveLargerThanTheSizeLimit_isRefused_andTheCacheStaysAsItWas() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        try await log.setRetentionPolicy(RetentionPolicy(history: nil, sizeLimit: 1 << 20), by: "test")
        try await save(log, "small", "kept", at: clock)
        var generator = SystemRandomNumberGenerator()
        let huge = Data((0..<1_500_000).map { _ in UInt8.random(in: 0...255, using: &generator) })

        await #expect {
            try await log.append([.delete(key: "huge", reason: .replaced), .put(key: "huge", payload: huge, timestamp: clock.date)])
        } throws: { error in
            guard case CacheLogError.exceedsSizeLimit(_, let limit) = error else { return false }
            return limit == 1 << 20
        }
        #expect(try log.state().entries.map(\.key) == ["small"])
        #expect(try events(log, EventQuery(kinds: [.delete])).allSatisfy { $0.reason != .evicted })
    }
    @Test func compaction_pastTheRecordsOfEarlierPolicies_removesThem_keepsTheOneInEffect_andVerifyAndRebuildStayClean() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        try await log.setRetentionPolicy(RetentionPolicy(history: 30 * Self.day, sizeLimit: nil), by: "test")
        let inEffect = try await log.setRetentionPolicy(RetentionPolicy(history: 40 * Self.day, sizeLimit: nil), by: "test")
        try await save(log, "films", "first", at: clock)
        clock.advance(60)
        try await save(log, "films", "second", at: clock)

        // A retention record is about no key: the key index never listed it, so removing the
        // earlier one, and keeping the one in effect, must not ask the index about an empty key.
        let last = try log.lastSeq()
        let report = try await log.compact(before: .seq(last))
        #expect(report.firstAvailable == last - 1)

        let kept = try events(log, EventQuery(kinds: [.retention])).map(\.seq)
        #expect(kept == [inEffect], "the earlier policy's record goes, the one in effect stays")
        #expect(try log.retentionPolicy().seq == inEffect)
        #expect(try log.verify().isClean)
        #expect(try await log.rebuildState().keyIndexEntriesRepaired == 0)
        #expect(try log.verify().isClean)
    }

    @Test func verify_andRebuild_ofALogThatRecordsAPolicy_nameAndRepairADamagedIndex_insteadOfFailing() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        try await log.setRetentionPolicy(RetentionPolicy(history: 30 * Self.day, sizeLimit: nil), by: "test")
        try await save(log, "films", "first", at: clock)
        // An outside program drops the films put's entry from the index: verify compares the index
        // with the log record by record, the retention record among them.
        let put = try #require(try events(log, EventQuery(key: "films", kinds: [.put])).first?.seq)
        try RawLMDB.write(log) { txn, _ in
            var keys: MDB_dbi = 0
            try #require(mdb_dbi_open(txn, "keys", UInt32(MDB_DUPSORT | MDB_DUPFIXED), &keys) == MDB_SUCCESS)
            var key = Array("films".utf8), value = RawLMDB.seqKey(put)
            let deleted = key.withUnsafeMutableBytes { k in
                value.withUnsafeMutableBytes { v in
                    var kv = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
                    var vv = MDB_val(mv_size: v.count, mv_data: v.baseAddress)
                    return mdb_del(txn, keys, &kv, &vv)
                }
            }
            try #require(deleted == MDB_SUCCESS)
        }

        let report = try log.verify()
        #expect(report.problems.map(\.seq) == [put], "\(report.problems)")
        #expect(try await log.rebuildState().keyIndexEntriesRepaired == 1)
        #expect(try log.verify().isClean)
    }
    @Test func apply_withAPassUnderWayFromAnEarlierClock_finishesIt_andAppliesThePolicyAsOfNow() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock, automatic: false)
        try await log.setRetentionPolicy(RetentionPolicy(history: Self.day, sizeLimit: nil), by: "test")
        clock.set(Date(timeIntervalSince1970: 1_800_000_000))
        // More history than one slice walks, so that one step leaves the pass under way.
        try await log.append((0..<1_100).flatMap { index -> [Event] in
            [.delete(key: "k\(index)", reason: .replaced), .put(key: "k\(index)", payload: payload("v\(index)"), timestamp: clock.date)]
        })
        clock.advance(5 * Self.day)
        // One step, as a writer's slice after a commit: a process that ends then leaves the pass in meta.
        func oneStep() throws -> Bool { try log.environment.write { txn in try Retention(tables: log.tables).step(txn, now: clock.date) } }
        #expect(try oneStep(), "the pass is under way, at its clock")
        // Saved after that pass began: history as of later, never as of the pass's clock.
        clock.advance(3_600)
        try await save(log, "films", "first", at: clock)
        clock.advance(3_600)
        try await save(log, "films", "second", at: clock)
        clock.advance(3 * Self.day)

        try await log.applyRetention()

        #expect(try puts(log, key: "films").map { String(decoding: $0.payload ?? Data(), as: UTF8.self) } == ["second"],
                "the first save is history outside the window now")
        #expect(try log.retentionStatus().lastPass?.startedAt == clock.date)
        #expect(try log.retentionStatus().lastPass?.finished == true)
        #expect(try log.verify().isClean)
    }
    @Test func theVersionAHistoryStartsFrom_foldsToWhatTheKeyWasThere_anExpireThatJudgedAnEarlierVersionKeepsTheLivePut_oneAfterADeleteKeepsNone() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock, automatic: false)
        try await log.setRetentionPolicy(RetentionPolicy(history: Self.day, sizeLimit: nil), by: "test")
        // Both expires judged a version older than the put before them (a validation that read
        // the cache before a save landed): one key outlives its expire, the other was deleted first.
        let earlier = clock.date.addingTimeInterval(-3_600)
        try await log.append(.put(key: "outlived", payload: payload("first"), timestamp: clock.date))
        let outlived = try await log.append(.expire(key: "outlived", timestamp: earlier, maxAge: 60))
        try await log.append([.put(key: "deleted", payload: payload("gone"), timestamp: clock.date), .delete(key: "deleted", reason: .explicit)])
        let deleted = try await log.append(.expire(key: "deleted", timestamp: earlier, maxAge: 60))
        clock.advance(2 * Self.day)
        try await save(log, "outlived", "second", at: clock)
        clock.advance(60)

        try await log.applyRetention()

        #expect(try events(log, EventQuery(key: "deleted")).map(\.seq) == [deleted], "an expire after a delete needs nothing before it")
        #expect(try events(log, EventQuery(key: "outlived")).count == 4, "the put still live after the expire stays with it")
        #expect(try log.state(asOf: .seq(deleted)).entries.map(\.key) == ["outlived"], "the deleted key folds to absent there")
        #expect(try log.state(asOf: .seq(outlived)).entries.first?.timestamp == clock.date.addingTimeInterval(-60 - 2 * Self.day))
        #expect(try log.verify().isClean)
    }

    @Test func expiredCaches_keepOnlyTheirExpire_soUnderTheSizeLimitTheirBytesGoBeforeAnyLiveCacheIsEvicted() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        let limit = 2 << 20
        // No window: only the size limit trims.
        try await log.setRetentionPolicy(RetentionPolicy(history: nil, sizeLimit: limit), by: "test")
        var generator = SystemRandomNumberGenerator()
        func incompressible() -> Data { Data((0..<200_000).map { _ in UInt8.random(in: 0...255, using: &generator) }) }
        // Eight caches of 200 KB, validated and expired: nothing live needs their bytes.
        for index in 0..<8 {
            clock.advance(60)
            try await log.append([.delete(key: "expired\(index)", reason: .replaced), .put(key: "expired\(index)", payload: incompressible(), timestamp: clock.date)])
            try await log.append(.expire(key: "expired\(index)", timestamp: clock.date, maxAge: 60))
        }
        // Three live caches of 200 KB: far less than the limit by themselves.
        for index in 0..<3 {
            clock.advance(60)
            try await log.append([.delete(key: "live\(index)", reason: .replaced), .put(key: "live\(index)", payload: incompressible(), timestamp: clock.date)])
        }

        try await log.applyRetention()

        #expect(try events(log, EventQuery(kinds: [.delete])).filter { $0.reason == .evicted }.isEmpty, "no live cache is evicted while they fit")
        #expect(try log.state().entries.map(\.key) == ["live0", "live1", "live2"])
        #expect(try events(log, EventQuery(kinds: [.put])).map(\.key) == ["live0", "live1", "live2"], "the expired caches' bytes went")
        #expect(try log.retentionStatus().bytesInUse <= limit)
        #expect(try log.verify().isClean)
    }
    @Test func aSliceQueuedByACommit_thatRunsAfterAnApplyEndedThePass_startsNoOther_andTheApplysReportStands() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        try await log.setRetentionPolicy(RetentionPolicy(history: Self.day, sizeLimit: nil), by: "test")
        try await save(log, "films", "first", at: clock)
        clock.advance(3 * Self.day)
        // This commit makes a pass due and queues a slice; the apply may run before it.
        try await save(log, "films", "second", at: clock)
        let applied = try #require(try await log.applyRetention())
        #expect(applied.finished)

        // The queued slice, whenever it runs (a minute later here): nothing is due any more.
        clock.advance(60)
        try await log.writer.exclusive { log.writer.runRetentionSlice() }

        #expect(try log.retentionStatus().lastPass == applied)
    }
    @Test func anExpireThatRemovedAKey_keepsThePutItJudged_whileAPutBeforeItStaysForItsBytes_soTheFoldNeverRevivesIt() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock, automatic: false)
        try await log.setRetentionPolicy(RetentionPolicy(history: Self.day, sizeLimit: nil), by: "test")
        try await save(log, "films", "same bytes", at: clock)
        // More records than a slice walks, so that the refresh below is judged in a later slice
        // than the put whose bytes it refers to.
        try await log.append((0..<1_100).flatMap { index -> [Event] in
            [.delete(key: "k\(index)", reason: .replaced), .put(key: "k\(index)", payload: payload("v\(index)"), timestamp: clock.date)]
        })
        clock.advance(60)
        try await save(log, "films", "same bytes", at: clock)
        let refreshed = try #require(try puts(log, key: "films").last?.timestamp)
        #expect(try puts(log, key: "films").count == 2)
        let expired = try await log.append(.expire(key: "films", timestamp: refreshed, maxAge: 60))
        clock.advance(3 * Self.day)

        try await log.applyRetention()

        // The first put stayed for the refresh's bytes while the refresh was still there: the
        // refresh stays with the expire, so that what is left folds to no films there.
        #expect(try log.state(asOf: .seq(expired)).entries.contains { $0.key == "films" } == false)
        #expect(try log.verify().isClean)
        // A later pass lets all of it go but the expire.
        clock.advance(2 * Self.day)
        try await log.applyRetention()
        #expect(try events(log, EventQuery(key: "films")).map(\.seq) == [expired])
        #expect(try log.state(asOf: .seq(expired)).entries.contains { $0.key == "films" } == false)
        #expect(try log.verify().isClean)
    }
    @Test func aKeyTheCompactionBaseHeld_andAnExpireRemovedAfterIt_keepsWhatEndedIt_soTheFoldFromTheCheckpointEndsItToo() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock, automatic: false)
        try await log.setRetentionPolicy(RetentionPolicy(history: Self.day, sizeLimit: nil), by: "test")
        try await save(log, "films", "first", at: clock)
        try await save(log, "genres", "first", at: clock)
        // The base checkpoint holds films live: the fold starts from it.
        try await log.compact(before: .seq(try log.lastSeq() + 1))
        clock.advance(60)
        try await save(log, "films", "second", at: clock)
        try await log.append(.expire(key: "films", timestamp: clock.date, maxAge: 60))
        clock.advance(3 * Self.day)

        try await log.applyRetention()

        #expect(try log.state().entries.map(\.key) == ["genres"])
        #expect(try log.verify().isClean, "the fold from the base checkpoint ends films where the expire did")
    }
    @Test func aRecordThatFailsItsChecksum_staysThroughAPass_forVerifyToName_andTheKeyIndexListsNothingThatIsGone() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock, automatic: false)
        try await log.setRetentionPolicy(RetentionPolicy(history: Self.day, sizeLimit: nil), by: "test")
        try await save(log, "films", "first", at: clock)
        let first = try #require(try puts(log, key: "films").first?.seq)
        clock.advance(60)
        try await save(log, "films", "second", at: clock)
        // A flipped key byte: the first put now reads as a record of "finms", a key with history of its own.
        var record = try RawLMDB.record(first, in: log)
        record[40] ^= 0x02
        try RawLMDB.replace(first, with: record, in: log)
        clock.advance(60)
        try await save(log, "finms", "other", at: clock)
        clock.advance(3 * Self.day)

        try await log.applyRetention()

        #expect(try RawLMDB.record(first, in: log) == record, "damage stays, whatever its header now says")
        let problems = try log.verify().problems
        #expect(!problems.isEmpty && problems.allSatisfy { $0.seq == first }, "\(problems)")
    }

    @Test func aSaveThatFitsTheLimit_staysLive_thoughAbovetheMarginBelowIt_andOneThatFitsOnlyWithoutTheDatabasesOwnPages_isRefused() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        let limit = 1 << 20
        try await log.setRetentionPolicy(RetentionPolicy(history: nil, sizeLimit: limit), by: "test")
        var generator = SystemRandomNumberGenerator()
        func noise(_ count: Int) -> Data { Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }) }

        // Over the margin retention trims history to (9/10 of the limit), under the limit itself.
        try await log.append([.delete(key: "big", reason: .replaced), .put(key: "big", payload: noise(940_000), timestamp: clock.date)])
        try await log.applyRetention()
        let used = try log.retentionStatus().bytesInUse
        #expect(used > limit * 9 / 10 && used <= limit, "\(used)")
        #expect(try log.entry("big") != nil, "a live cache within the limit is never evicted")

        // Under the limit alone, not beside the pages every database keeps: let in, the next pass
        // would have to evict it, the cache with it.
        clock.advance(60)
        await #expect {
            try await log.append([.delete(key: "big", reason: .replaced), .put(key: "big", payload: noise(1_000_000), timestamp: clock.date)])
        } throws: { error in
            guard case CacheLogError.exceedsSizeLimit(let bytes, limit) = error else { return false }
            return bytes > limit
        }
        try await log.applyRetention()
        #expect(try log.entry("big")?.timestamp == clock.date.addingTimeInterval(-60), "the cache stays as it was")
        #expect(try events(log, EventQuery(kinds: [.delete])).allSatisfy { $0.reason != .evicted })
        #expect(try log.verify().isClean)
    }

    @Test func aPassStampedLaterThanTheClock_holdsOffNoPass_theNextCommitRunsOneAndRestampsIt() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock)
        try await log.setRetentionPolicy(RetentionPolicy(history: Self.day, sizeLimit: nil), by: "test")
        let start = clock.date
        try await save(log, "films", "first", at: clock)
        // A what-if pass far ahead (`retention --apply --now 9999-…`), or a clock set back after one.
        clock.set(Date(timeIntervalSince1970: 250_000_000_000))
        try await log.applyRetention()
        clock.set(start.addingTimeInterval(3 * Self.day))
        for minute in 0..<3 {
            clock.advance(60)
            try await save(log, "films", "version \(minute)", at: clock)
        }

        try await log.applyRetentionIfDue()

        // Restamped by the commits' clock: by the first of them, or by the apply after them.
        let restamped = try #require(try log.retentionStatus().lastPass?.startedAt)
        #expect(restamped > start.addingTimeInterval(3 * Self.day) && restamped <= clock.date, "\(restamped)")
    }

    @Test func aPassReports_theRecordsItRemoved_eachOnce_alsoWhenWhatEndedAKeyGoesWithThePutsBeforeIt() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock, automatic: false)
        try await log.setRetentionPolicy(RetentionPolicy(history: Self.day, sizeLimit: nil), by: "test")
        for version in 0..<3 {
            clock.advance(60)
            try await save(log, "films", "version \(version)", at: clock)
        }
        let last = try #require(try puts(log, key: "films").last?.timestamp)
        try await log.append(.expire(key: "films", timestamp: last, maxAge: 60))
        clock.advance(3 * Self.day)
        try await save(log, "genres", "later", at: clock)
        let before = try events(log).count

        let report = try #require(try await log.applyRetention())

        #expect(report.removed == before - (try events(log).count), "each removed record counted once")
        #expect(report.removed > 0)
        #expect(try log.verify().isClean)
    }

    @Test func aRecordAStoredPutNeeds_goneInsideTheZoneRetentionLetGo_isDamage_andVerifyNamesItAndWhatUsesIt() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let log = try log(directory, clock: clock, automatic: false)
        try await log.setRetentionPolicy(RetentionPolicy(history: Self.day, sizeLimit: nil), by: "test")
        try await save(log, "genres", "old", at: clock)
        try await save(log, "films", "unchanged", at: clock)
        let source = try #require(try puts(log, key: "films").first?.seq)
        clock.advance(60)
        try await save(log, "genres", "newer", at: clock)
        clock.advance(3 * Self.day)
        // The unchanged feed refreshed: a reference to the first put, which retention keeps for it.
        try await save(log, "films", "unchanged", at: clock)
        let reference = try #require(try puts(log, key: "films").last?.seq)
        #expect(try log.entry("films")?.payloadSeq == source)
        // An outside program removes the record the live put refers to; then a pass lets genres'
        // old history go, seqs after it, so the zone where a missing seq is no damage covers it.
        try RawLMDB.write(log) { txn, tables in RawLMDB.delete(txn, tables.events, RawLMDB.seqKey(source)) }
        try await log.applyRetention()
        #expect(try retentionZone(log) > source)

        // Retention never lets a record go that a stored put needs: its absence is damage.
        let problems = try log.verify().problems.map(\.description)
        #expect(problems.contains("seq \(source): record missing (the put at seq \(reference) uses it)"), "\(problems)")
    }

    /// The highest seq retention removed, as its state in `meta` records it.
    private func retentionZone(_ log: EventLog) throws -> UInt64 {
        try log.environment.read { txn in try Retention(tables: log.tables).state(txn).zone }
    }
}
