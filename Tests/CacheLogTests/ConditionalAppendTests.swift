import CLMDB
import Dispatch
import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

/// A save names how far the log had got when its fetch began (the log's last seq then), and it
/// is not appended while the key's live put is newer by the log's own order: a put whose fetch
/// began no earlier, or, for one that recorded no position, one that landed after that. The cache
/// timestamps come from clocks that may disagree and are never compared.
@Suite("A save never replaces a newer cache, by the log's order")
struct ConditionalAppendTests {
    let cachedAt = Date(timeIntervalSince1970: 1_700_000_000)

    func save(_ key: String, _ text: String, at timestamp: Date? = nil) -> [Event] {
        [.delete(key: key, reason: .replaced),
         .put(key: key, payload: payload(text), timestamp: timestamp ?? cachedAt, maxAge: 600, metadata: ["contract": "films"])]
    }

    /// Moves the log on by `count` events of another key, as other saves would.
    func advance(_ log: EventLog, by count: Int) async throws {
        for index in 0..<count { try await log.append(.put(key: "genres", payload: payload("[\(index)]"), timestamp: cachedAt)) }
    }

    @Test func conditionalAppend_withNoLiveEntry_appends_andItsPutRecordsWhereItsFetchBegan() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        #expect(try await log.append(save("films", "[1]"), unlessSupersededSince: 0, liveAt: "films") == .appended(1...2))
        let first = try #require(try log.entry("films"))
        #expect(first.since == 0 && first.metadata == ["contract": "films", "since": "0"])
        // The delete of the batch records nothing: only puts of the key judged carry a position.
        #expect(try events(log).map { $0.metadata["since"] } == [nil, "0"])

        // A key deleted because its cache could not be read has no live entry either, however
        // late its last put's fetch began.
        try await log.append(.delete(key: "films", reason: .retrievalError))
        #expect(try await log.append(save("films", "[2]"), unlessSupersededSince: 0, liveAt: "films") == .appended(4...5))
        #expect(try log.retrieve("films")?.payload == payload("[2]"))
    }

    /// Someone removed the key after the fetch began: its answer must not bring back what they
    /// removed. A fetch that began after the removal saves as usual.
    @Test func conditionalAppend_afterAnExplicitRemovalSinceTheFetchBegan_writesNothing_andNamesTheRemoval() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        #expect(try await log.append(save("films", "[1]"), unlessSupersededSince: 0, liveAt: "films") == .appended(1...2))
        let began = try log.lastSeq()
        try await log.append(.delete(key: "films", reason: .explicit))

        let refused = try await log.append(save("films", "[2]"), unlessSupersededSince: began, liveAt: "films")

        guard case .removed(let seq, _) = refused else { Issue.record("not refused for the removal: \(refused)"); return }
        #expect(seq == 3)
        #expect(try log.lastSeq() == 3 && !log.isLive("films"))
        #expect(try await log.append(save("films", "[3]"), unlessSupersededSince: 3, liveAt: "films") == .appended(4...5))
        #expect(try log.retrieve("films")?.payload == payload("[3]"))
    }

    @Test func conditionalAppend_whenTheLivePutsFetchBeganLater_writesNothing_andNamesThatPut() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await advance(log, by: 2)
        #expect(try await log.append(save("films", "[began at 2]"), unlessSupersededSince: 2, liveAt: "films") == .appended(3...4))
        let live = try #require(try log.entry("films"))

        let outcome = try await log.append(save("films", "[began at 1]"), unlessSupersededSince: 1, liveAt: "films")

        #expect(outcome == .superseded(by: live))
        #expect(live.since == 2 && live.maxAge == 600 && live.metadata["contract"] == "films")
        #expect(try log.lastSeq() == 4)
        #expect(try log.retrieve("films")?.payload == payload("[began at 2]"))
        // No seq was taken: the next append continues right after the live put.
        #expect(try await log.append(.put(key: "genres", payload: payload("[]"), timestamp: cachedAt)) == 5)
        #expect(try log.verify().isClean)
    }

    /// A refused save writes nothing, not even the log's recorded time: were its clock (an hour
    /// ahead here) to stand as the log's, the next writer's records would be recorded at a time no
    /// record of the log has, and a writer checking its clock against the last record would not
    /// know it was behind.
    @Test func conditionalAppend_whenSuperseded_leavesTheLogsRecordedTimeAsTheLastAppendLeftIt() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock)
        try await advance(log, by: 2)
        #expect(try await log.append(save("films", "[began at 2]"), unlessSupersededSince: 2, liveAt: "films") == .appended(3...4))
        let landed = clock.date
        clock.advance(3_600)
        #expect(try await log.append(save("films", "[began at 1]"), unlessSupersededSince: 1, liveAt: "films")
            == .superseded(by: try #require(try log.entry("films"))))

        clock.set(landed + 60)
        #expect(try await log.append(.put(key: "genres", payload: payload("[next]"), timestamp: cachedAt)) == 5)

        #expect(try events(log).map(\.recordedAt) == [landed, landed, landed, landed, landed + 60])
    }

    /// Two fetches that began with nothing appended between them cannot be told apart by the log:
    /// the one that landed first stays, and the other writes nothing.
    @Test func conditionalAppend_whenBothFetchesBeganAtOnePosition_theFirstToLandStays() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await advance(log, by: 2)
        #expect(try await log.append(save("films", "[first]"), unlessSupersededSince: 2, liveAt: "films") == .appended(3...4))

        let outcome = try await log.append(save("films", "[second]"), unlessSupersededSince: 2, liveAt: "films")

        #expect(outcome == .superseded(by: try #require(try log.entry("films"))))
        #expect(try log.retrieve("films")?.payload == payload("[first]"))
    }

    /// The stamps play no part, whichever way the clocks that took them disagree.
    @Test func conditionalAppend_whenTheLivePutsFetchBeganEarlier_replacesIt_whateverTheStampsSay() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        let twoDays: TimeInterval = 2 * 86_400
        try await advance(log, by: 3)
        // Began at 1, stamped two days ahead; then began at 2, stamped two days behind: replaces it.
        #expect(try await log.append(save("films", "[1]", at: cachedAt + twoDays), unlessSupersededSince: 1, liveAt: "films") == .appended(4...5))
        #expect(try await log.append(save("films", "[2]", at: cachedAt - twoDays), unlessSupersededSince: 2, liveAt: "films") == .appended(6...7))
        // Began at 1 again, stamped two days ahead of that: older, whatever its stamp says.
        let outcome = try await log.append(save("films", "[1 again]", at: cachedAt + twoDays), unlessSupersededSince: 1, liveAt: "films")

        #expect(outcome == .superseded(by: try #require(try log.entry("films"))))
        #expect(try log.retrieve("films")?.payload == payload("[2]"))
        #expect(try log.entry("films")?.timestamp == cachedAt - twoDays)
    }

    /// A put written before positions were recorded (or by a plain append) is judged by when it
    /// landed: newer than a fetch that began before it, older than one that began after.
    @Test func conditionalAppend_overAPutThatRecordedNoPosition_isSupersededOnlyWhenThatPutLandedAfterItsFetchBegan() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await advance(log, by: 1)
        try await log.append(.put(key: "films", payload: payload("[plain]"), timestamp: cachedAt))
        let plain = try #require(try log.entry("films"))
        #expect(plain.seq == 2 && plain.since == nil)

        #expect(try await log.append(save("films", "[began at 1]"), unlessSupersededSince: 1, liveAt: "films") == .superseded(by: plain))
        #expect(try await log.append(save("films", "[began at 2]"), unlessSupersededSince: 2, liveAt: "films") == .appended(3...4))
        #expect(try log.retrieve("films")?.payload == payload("[began at 2]"))
    }

    @Test func conditionalAppend_judgesTheKeyItNames_notTheKeysOfItsEvents() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        #expect(try await log.append(save("search:totoro", "[page 1]"), unlessSupersededSince: 0, liveAt: "search:totoro") == .appended(1...2))
        // Objects written with a search are kept only when the search itself is not superseded.
        let objects: [Event] = [.put(key: "object:1", payload: payload("{}"), timestamp: cachedAt)]
        let outcome = try await log.append(objects, unlessSupersededSince: 0, liveAt: "search:totoro")
        #expect(outcome == .superseded(by: try #require(try log.entry("search:totoro"))))
        #expect(try log.entry("object:1") == nil)
    }

    @Test func conditionalAppend_refusesAnEmptyOrOverlongKey_andAnEmptyBatch() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        await #expect(throws: CacheLogError.emptyKey) {
            try await log.append(save("films", "[1]"), unlessSupersededSince: 0, liveAt: "")
        }
        let long = String(repeating: "k", count: log.maxKeySize + 1)
        await #expect(throws: CacheLogError.keyTooLong(length: log.maxKeySize + 1, maximum: log.maxKeySize)) {
            try await log.append(save("films", "[1]"), unlessSupersededSince: 0, liveAt: long)
        }
        await #expect(throws: CacheLogError.emptyBatch) {
            try await log.append([], unlessSupersededSince: 0, liveAt: "films")
        }
        #expect(try log.lastSeq() == 0)
    }

    @Test func conditionalAppend_inOneGroupCommit_judgesEachBatchAfterTheBatchesBeforeIt() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        // Hold the writer, queue four appends one after the other, then let them commit together.
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let hold = Task { try await log.writer.exclusive { entered.signal(); release.wait() } }
        #expect(try await eventually(timeout: .seconds(300)) { entered.wait(timeout: .now()) == .success })
        let commitsBefore = log.writer.commits.withLock { $0 }

        // Every fetch began on the empty log: none of them can be told apart by the log's order.
        var outcomes: [Task<AppendOutcome, any Error>] = []
        let first = save("films", "[first]"), second = save("films", "[second]"), series = save("series", "[1]")
        outcomes.append(Task { try await log.append(first, unlessSupersededSince: 0, liveAt: "films") })
        #expect(try await eventually(timeout: .seconds(300)) { log.writer.queuedJobs == 1 })
        outcomes.append(Task { try await log.append(second, unlessSupersededSince: 0, liveAt: "films") })
        #expect(try await eventually(timeout: .seconds(300)) { log.writer.queuedJobs == 2 })
        let plain = Task { try await log.append(.put(key: "genres", payload: payload("[]"), timestamp: cachedAt)) }
        #expect(try await eventually(timeout: .seconds(300)) { log.writer.queuedJobs == 3 })
        outcomes.append(Task { try await log.append(series, unlessSupersededSince: 0, liveAt: "series") })
        #expect(try await eventually(timeout: .seconds(300)) { log.writer.queuedJobs == 4 })
        release.signal()
        try await hold.value

        #expect(try await outcomes[0].value == .appended(1...2))
        // Superseded by the put committed just before it in the same transaction.
        guard case .superseded(let live) = try await outcomes[1].value else {
            Issue.record("the second save of films was appended")
            return
        }
        #expect(live.seq == 2 && live.since == 0)
        #expect(try await plain.value == 3)
        #expect(try await outcomes[2].value == .appended(4...5))
        #expect(log.writer.commits.withLock { $0 } == commitsBefore + 1)
        #expect(try log.retrieve("films")?.payload == payload("[first]"))
        #expect(try events(log).map(\.seq) == [1, 2, 3, 4, 5])
        #expect(try log.verify().isClean)
    }

    /// This process and `cachelog-writer` save the same seven keys at once, each save's fetch
    /// taken to have begun some events before it (its position: the log's last seq less a lag,
    /// some of them the empty log's 0). Each put that lands began its fetch later than the put it
    /// replaces, so each key's recorded positions only grow along the log; each refused save
    /// names a live put that began no earlier; and both processes had saves refused.
    @Test func twoProcesses_savingTheSameKeys_neverReplaceANewerCache() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path("db")
        let log = try makeLog(dir)
        let count = 140
        var generator = SeededGenerator(seed: 22)
        // The empty log's position (a lag past any seq) every tenth save from the eighth: by then
        // its key holds a put of the other process or of this one, which such a save never replaces.
        func lags() -> [UInt64] {
            (0..<count).map { $0 >= 7 && $0 % 10 == 7 ? 1_000_000 : UInt64.random(in: 0...12, using: &generator) }
        }
        let theirs = lags(), ours = lags()
        let writer = try ChildProcess(
            try builtProduct("cachelog-writer"), [db, "\(count)", "--batch", "--lag", theirs.map(String.init).joined(separator: ",")])
        // Start once the writer has its first save in, so that the two run side by side.
        _ = try await eventually(timeout: .seconds(300)) { ((try? String(contentsOf: writer.stdoutFile, encoding: .utf8)) ?? "").contains("\n") }

        var superseded = 0
        for (index, lag) in ours.enumerated() {
            let key = "k\(index % 7)"
            let last = try log.lastSeq()
            let since = last > lag ? last - lag : 0
            let outcome = try await log.append(
                [.delete(key: key, reason: .replaced), .put(key: key, payload: payload("\(index)"), timestamp: Date())],
                unlessSupersededSince: since, liveAt: key)
            if case .superseded(let live) = outcome {
                superseded += 1
                #expect(live.key == key && (live.since ?? 0) >= since)
            }
        }
        let ended = await writer.finish()
        #expect(ended.exited && ended.status == 0, "\(ended.stderrText)")

        let lines = ended.stdoutText.split(separator: "\n")
        #expect(lines.count == count)
        let recorded = try events(log)
        let bySeq = Dictionary(recorded.map { ($0.seq, $0) }, uniquingKeysWith: { first, _ in first })
        var theirsSuperseded = 0
        for (index, line) in lines.enumerated() where line.hasPrefix("superseded ") {
            theirsSuperseded += 1
            let fields = line.split(separator: " ")
            let seq = try #require(fields.count == 3 ? UInt64(fields[1]) : nil), since = try #require(UInt64(fields[2]))
            let live = try #require(bySeq[seq])
            #expect(live.kind == .put && live.key == "k\(index % 7)")
            #expect(try #require(live.metadata["since"].flatMap { UInt64($0) }) >= since)
        }
        #expect(superseded > 0 && theirsSuperseded > 0)
        for k in 0..<7 {
            let positions = recorded.filter { $0.kind == .put && $0.key == "k\(k)" }.compactMap { $0.metadata["since"].flatMap { UInt64($0) } }
            #expect(zip(positions, positions.dropFirst()).allSatisfy { $0 < $1 }, "k\(k): a put replaced one whose fetch began no earlier: \(positions)")
        }
        // Every save either landed (two events) or was refused (none).
        #expect(recorded.count == 2 * (2 * count - superseded - theirsSuperseded))
        #expect(try log.verify().isClean)
    }
}

/// What a conditional append does not believe, and what it leaves out of a batch.
@Suite("Conditional appends: positions that cannot be, damaged rows, keys left out")
struct ConditionalAppendTrustTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    private func save(_ key: String, _ text: String, at timestamp: Date) -> [Event] {
        [.delete(key: key, reason: .replaced), .put(key: key, payload: Data(text.utf8), timestamp: timestamp)]
    }

    /// A put cannot have begun its fetch at or after its own seq: such a position (damage, or an
    /// app's own metadata) reads as the seq before it, so it never wins over every later save;
    /// one that is not decimal digits reads as none.
    @Test func aRecordedPositionAtOrPastItsPutsSeq_readsAsTheSeqBeforeIt_andNoDigitsAsNone() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir, clock: TestClock(start))
        try await log.append(.put(key: "films", payload: Data("[ahead]".utf8), timestamp: start, metadata: [Event.sinceName: "999999"]))
        try await log.append(.put(key: "genres", payload: Data("[x]".utf8), timestamp: start, metadata: [Event.sinceName: "+1"]))
        #expect(try log.entry("films")?.since == 0)
        #expect(try log.entry("genres")?.since == nil)

        #expect(try await log.append(save("films", "[later]", at: start), unlessSupersededSince: 1, liveAt: "films") == .appended(3...4))
        #expect(try log.retrieve("films")?.payload == Data("[later]".utf8))
    }

    /// The rule of the stamps that came before it (a cache stamped by a clock ahead) is no part
    /// of this one: a save whose fetch began later replaces it.
    @Test func aLivePutStampedYearsAhead_isReplacedByASaveWhoseFetchBeganLater() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock(start)
        let log = try makeLog(dir, clock: clock)
        clock.set(start + 10 * 365 * 86_400)
        #expect(try await log.append(save("films", "[ahead]", at: clock.date), unlessSupersededSince: 0, liveAt: "films") == .appended(1...2))
        clock.set(start)

        #expect(try await log.append(save("films", "[now]", at: start), unlessSupersededSince: 2, liveAt: "films") == .appended(3...4))
        #expect(try log.retrieve("films")?.payload == Data("[now]".utf8))
    }

    /// A state row that names no put of its key (a flipped bit in its seq) is no cache to keep.
    @Test func aStateRowThatNamesNoPutOfItsKey_neverSupersedesASave() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir, clock: TestClock(start))
        #expect(try await log.append(save("films", "[1]", at: start), unlessSupersededSince: 0, liveAt: "films") == .appended(1...2))
        try RawLMDB.write(log) { txn, dbs in
            var row = try #require(RawLMDB.get(txn, dbs.state, Array("films".utf8)))
            row[7] ^= 1  // seq 2 becomes 3, past the log
            #expect(RawLMDB.put(txn, dbs.state, Array("films".utf8), row) == MDB_SUCCESS)
        }

        #expect(try await log.append(save("films", "[2]", at: start), unlessSupersededSince: 0, liveAt: "films") == .appended(3...4))
        #expect(try log.retrieve("films")?.payload == Data("[2]".utf8))
    }

    @Test func aBatchWithOtherKeys_leavesOutTheEventsOfThoseWhoseLiveEntryIsNewer() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir, clock: TestClock(start))
        try await log.append(.put(key: "genres", payload: Data("[]".utf8), timestamp: start))
        // Loaded on its own, its fetch begun at 1, while the search's (begun at 1 too) was in flight.
        #expect(try await log.append(save("object:1", "{\"newer\":true}", at: start), unlessSupersededSince: 1, liveAt: "object:1") == .appended(2...3))

        let batch = save("search:q", "[page]", at: start) + save("object:1", "{}", at: start) + save("object:2", "{}", at: start)
        let outcome = try await log.append(batch, unlessSupersededSince: 1, liveAt: "search:q", leavingNewer: ["object:1", "object:2"])

        #expect(outcome == .appended(4...7, leftOut: ["object:1"]))
        #expect(try log.retrieve("object:1")?.payload == Data("{\"newer\":true}".utf8))
        #expect(try log.retrieve("object:2")?.payload == Data("{}".utf8))
        #expect(try log.retrieve("search:q")?.payload == Data("[page]".utf8))
        #expect(try log.entry("object:2")?.since == 1 && log.entry("search:q")?.since == 1)
    }

    @Test func entry_ofARowThatNamesAnotherKeysPut_comesFromTheLog() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir, clock: TestClock(start))
        try await log.append(.put(key: "films", payload: Data("[1]".utf8), timestamp: start, maxAge: 604_800, metadata: ["contract": "films"]))
        try await log.append(.put(key: "genres", payload: Data("[2]".utf8), timestamp: start, maxAge: 60, metadata: ["contract": "genres"]))
        // A flipped bit moves the films row's seq from 1 to 2, the genres put.
        try RawLMDB.write(log) { txn, dbs in
            var row = try #require(RawLMDB.get(txn, dbs.state, Array("films".utf8)))
            row[7] ^= 3
            #expect(RawLMDB.put(txn, dbs.state, Array("films".utf8), row) == MDB_SUCCESS)
        }

        let entry = try #require(try log.entry("films"))

        #expect(entry.seq == 1 && entry.maxAge == 604_800 && entry.metadata["contract"] == "films")
    }
}
