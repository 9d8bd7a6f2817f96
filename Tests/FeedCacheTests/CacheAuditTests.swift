import CacheLog
import FeedCache
import CacheLogReports
import FeedCacheLog
import Foundation
import Locking
import TestSupport
import Testing

/// The audit and the report as an app calls them: on a real log written through the store, with
/// the one clock that stamps the events, before and after a compaction.
@Suite("The audit and the report in the library", .hangGuard)
struct CacheAuditTests {
    /// 2026-12-01T10:00:00Z.
    let start = Date(timeIntervalSince1970: 1_796_119_200)
    let day = 86_400.0
    func at(_ days: Double) -> Date { start.addingTimeInterval(days * day) }

    /// `films` saved on day 0 under a 1-day policy, then refreshed each day (a 304: the same
    /// bytes, a put that refers to the first put's record) until day `days - 1`. Seqs: the save's
    /// delete 1 and put 2, then the refreshes 3, 4, ….
    func dailyRefreshes(_ days: Int) async throws -> TemporaryCacheLog {
        let now = Locked(start)
        let database = try await TemporaryCacheLog(clock: { now.withLock { $0 } })
        let store = CacheLogFeedStore(log: database.log, key: "films")
        let policy = RecordedPolicy(maxAge: .days(1), contract: "films")
        try await store.replace(with: Data("[1]".utf8), timestamp: start, policy: policy, validators: CacheValidators())
        for index in 1..<days {
            now.withLock { $0 = at(Double(index)) }
            try await store.insert(Data("[1]".utf8), timestamp: at(Double(index)), policy: policy, validators: CacheValidators())
        }
        return database
    }

    func seqs(_ log: EventLog, key: String) throws -> [UInt64] {
        try log.events(EventQuery(key: key)).compactMap { item in
            if case .event(let event) = item { event.seq } else { nil }
        }
    }

    @Test
    func audit_afterCompaction_startsWithTheVersionLiveAtTheBase_andInventsNoStaleTime() async throws {
        let database = try await dailyRefreshes(6)
        let log = database.log
        let now = at(5.9)
        let audit = CacheAudit(log: log)
        let before = try audit.timeline(of: "films", now: now)

        try await log.compact(before: .seq(7))
        // Kept: put 2 for the bytes the last refresh refers to, put 6 for the state at the base.
        try #require(try seqs(log, key: "films") == [2, 6, 7])
        #expect(try log.compactionBase() == 6)

        let after = try audit.timeline(of: "films", now: now)
        let first = try #require(after.first)
        #expect(first.kind == .written && first.seq == 6 && first.at == at(4), "\(first)")
        #expect(first.text == "written (cached 2026-12-05T10:00:00Z, 3 bytes); live when the history up to seq 6 was compacted")
        // From the base on, the story is the one told before the compaction; put 2 is no version.
        #expect(Array(after.dropFirst()) == before.filter { $0.at >= at(5) })
        #expect(!after.contains { $0.seq == 2 })
        let window = DateInterval(start: at(0), end: now)
        #expect(CacheBands(after, window: window).duration(.stale) == 0)
        #expect(CacheBands(before, window: window).duration(.stale) == 0)
    }

    @Test
    func report_afterCompaction_agreesWithTheAudit_andCountsNoRecordKeptForItsBytes() async throws {
        let database = try await dailyRefreshes(6)
        let log = database.log
        try await log.compact(before: .seq(7))
        let now = at(5.9)

        #expect(try HistoryReport.start(of: ["films"], in: log) == at(4))
        let report = try HistoryReport(log: log, keys: ["films"], window: DateInterval(start: at(0), end: now), generatedAt: now)
        let films = try #require(report.keys.first)
        #expect(films.stale == 0 && films.missing == 0)
        #expect(films.fresh == now.timeIntervalSince(at(4)))
        #expect(films.puts == 2 && films.deletes == 0)
        #expect(films.marks.map(\.seq) == [6, 7])
        #expect(films.state == .fresh)
        let bands = CacheBands(try CacheAudit(log: log).timeline(of: "films", now: now), window: report.window)
        #expect(bands.bands.map(\.state) == [.none, .fresh])

        let page = report.html()
        #expect(page.hasPrefix("<!doctype html>"))
        #expect(page.contains("<tr data-key=\"films\" data-events=\"2\">"))
    }

    @Test
    func audit_ofEveryKey_tellsAKeyNotLiveAtTheBaseFromItsFirstEventAfterIt() async throws {
        let database = try await dailyRefreshes(3)
        let log = database.log
        try await log.append(.put(key: "genres", payload: Data("[2]".utf8), timestamp: at(2), maxAge: day))
        try await log.append(.delete(key: "genres", reason: .explicit))
        try await log.compact(before: .seq(try log.lastSeq() + 1))
        try await log.append(.put(key: "genres", payload: Data("[3]".utf8), timestamp: at(2), maxAge: day))

        let result = try CacheAudit(log: log).timelines(now: at(2.5))
        #expect(result.keys.map(\.key) == ["films", "genres"])
        #expect(result.corruptSeqs.isEmpty)
        #expect(result.keys[0].timeline.map(\.kind) == [.written])
        #expect(result.keys[0].timeline.first?.seq == 4)
        #expect(result.keys[1].timeline.map(\.kind) == [.written])
        #expect(result.keys[1].timeline.first?.text == "written (cached 2026-12-03T10:00:00Z, 3 bytes)")
    }

    /// A delete of a key with no cache (an app's, appended as is) changes nothing: the key had
    /// no cache yet, and "missing" would say one was there and is gone.
    @Test
    func aDeleteOfNothing_leavesTheKeyWithNoCacheYet_inTheBandsAndTheReport() async throws {
        let now = Locked(start)
        let database = try await TemporaryCacheLog(clock: { now.withLock { $0 } })
        let log = database.log
        try await log.append(.delete(key: "films", reason: .explicit))
        now.withLock { $0 = at(1) }
        try await log.append(.put(key: "films", payload: Data("[1]".utf8), timestamp: at(1), maxAge: 7 * day))
        now.withLock { $0 = at(2) }
        try await log.append(.delete(key: "films", reason: .explicit))
        try await log.append(.delete(key: "films", reason: .explicit))
        let window = DateInterval(start: at(-1), end: at(3))

        let timeline = try CacheAudit(log: log).timeline(of: "films", now: at(3))
        try #require(timeline.map(\.kind) == [.deleted, .written, .deleted, .deleted, .gap])
        let bands = CacheBands(timeline, window: window)
        #expect(bands.bands.map(\.state) == [CacheBands.State.none, .fresh, .missing])
        #expect(bands.bands.map(\.start) == [at(-1), at(1), at(2)])
        let report = try HistoryReport(log: log, keys: ["films"], window: window, generatedAt: at(3))
        let films = try #require(report.keys.first)
        #expect(films.missing == day, "missing only from the delete of the cache on day 2")
        #expect(films.fresh == day)
    }

    @Test
    func aVersionCachedLaterThanItWasRecorded_isJudgedFromItsRecording() async throws {
        let database = try await TemporaryCacheLog(clock: { start })
        let log = database.log
        try await log.append(.put(key: "films", payload: Data("[1]".utf8), timestamp: at(10), maxAge: 7 * day))

        // Stamped ten days ahead, it would be fresh until day 17; it is fresh seven days from its
        // recording, as the cache policy judges it.
        let timeline = try CacheAudit(log: log).timeline(of: "films", now: at(8))
        #expect(timeline.map(\.kind) == [.written, .stale])
        #expect(timeline.last?.at == at(7))
        #expect(CacheBands(timeline, window: DateInterval(start: start, end: at(8))).duration(.fresh) == 7 * day)
        // A timestamp at or before its recording keeps the cache's rule: stale once max age old.
        try await log.append(.put(key: "genres", payload: Data("[2]".utf8), timestamp: at(-1), maxAge: 7 * day))
        #expect(try CacheAudit(log: log).timeline(of: "genres", now: at(7)).last?.at == at(6))
    }

    @Test
    func recordedPolicy_isThePutsOwn_elseSevenDaysWithoutAContract_andNoneForOtherEvents() async throws {
        let database = try await TemporaryCacheLog(clock: { start })
        let log = database.log
        try await log.append(.put(key: "films", payload: Data("[1]".utf8), timestamp: start, maxAge: day, metadata: ["contract": "films"]))
        try await log.append(.put(key: "old", payload: Data("[1]".utf8), timestamp: start))
        try await log.append(.delete(key: "old", reason: .explicit))
        let events = try log.events().compactMap { item in if case .event(let event) = item { event } else { nil } }

        #expect(events.map { RecordedPolicy(of: $0) } == [RecordedPolicy(maxAge: .days(1), contract: "films"), .unrecorded, nil])
        #expect(RecordedPolicy.unrecorded == RecordedPolicy(maxAge: .days(7)))
        #expect(RecordedPolicy(of: try #require(try log.entry("films"))) == RecordedPolicy(maxAge: .days(1), contract: "films"))
        try await log.append(.put(key: "old", payload: Data("[1]".utf8), timestamp: start))
        #expect(RecordedPolicy(of: try #require(try log.entry("old"))) == .unrecorded)
        // The audit judges by the same rule: a day for films, seven for the put that recorded none.
        #expect(try CacheAudit(log: log).timeline(of: "films", now: at(8)).last?.text == "seq 1 became stale (max age 1d)")
        #expect(try CacheAudit(log: log).timeline(of: "old", now: at(8)).last?.text == "seq 4 became stale (max age 7d)")
    }
}
