import CLMDB
import Dispatch
import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

@Suite("A save never replaces a newer cache")
struct ConditionalAppendTests {
    // In the past of the log's clock: a live entry stamped later than that clock never supersedes.
    let cachedAt = Date(timeIntervalSince1970: 1_700_000_000)

    func save(_ key: String, _ text: String, at timestamp: Date) -> [Event] {
        [.delete(key: key, reason: .replaced), .put(key: key, payload: payload(text), timestamp: timestamp, maxAge: 600, metadata: ["contract": "films"])]
    }

    @Test func conditionalAppend_withNoLiveEntry_appends() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        #expect(try await log.append(save("films", "[1]", at: cachedAt), unlessNewerThan: cachedAt, liveAt: "films") == .appended(1...2))
        // A deleted key has no live entry either, however new its last put was.
        try await log.append(.delete(key: "films", reason: .explicit))
        let older = cachedAt - 3600
        #expect(try await log.append(save("films", "[2]", at: older), unlessNewerThan: older, liveAt: "films") == .appended(4...5))
        #expect(try log.retrieve("films")?.payload == payload("[2]"))
    }

    @Test func conditionalAppend_olderThanTheLiveEntry_writesNothing_andNamesTheNewerEntry() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(save("films", "[new]", at: cachedAt))
        let live = try #require(try log.entry("films"))

        let older = cachedAt - 0.001
        let outcome = try await log.append(save("films", "[old]", at: older), unlessNewerThan: older, liveAt: "films")

        #expect(outcome == .superseded(by: live))
        #expect(live.maxAge == 600 && live.metadata == ["contract": "films"])
        #expect(try log.lastSeq() == 2)
        #expect(try log.retrieve("films")?.payload == payload("[new]"))
        // No seq was taken: the next append continues right after the live put.
        #expect(try await log.append(.put(key: "genres", payload: payload("[]"), timestamp: older)) == 3)
        #expect(try log.verify().isClean)
    }

    @Test func conditionalAppend_atTheLiveTimestampOrLater_appends() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(save("films", "[1]", at: cachedAt))
        #expect(try await log.append(save("films", "[2]", at: cachedAt), unlessNewerThan: cachedAt, liveAt: "films") == .appended(3...4))
        let later = cachedAt + 1
        #expect(try await log.append(save("films", "[3]", at: later), unlessNewerThan: later, liveAt: "films") == .appended(5...6))
        #expect(try log.retrieve("films")?.payload == payload("[3]"))
    }

    @Test func conditionalAppend_judgesTheKeyItNames_notTheKeysOfItsEvents() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(save("search:totoro", "[page 1]", at: cachedAt))
        // Objects written with a search are kept only when the search itself is not superseded.
        let objects: [Event] = [.put(key: "object:1", payload: payload("{}"), timestamp: cachedAt - 60)]
        let outcome = try await log.append(objects, unlessNewerThan: cachedAt - 60, liveAt: "search:totoro")
        #expect(outcome == .superseded(by: try #require(try log.entry("search:totoro"))))
        #expect(try log.entry("object:1") == nil)
    }

    @Test func conditionalAppend_refusesAnEmptyOrOverlongKey_andAnEmptyBatch() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        await #expect(throws: CacheLogError.emptyKey) {
            try await log.append(save("films", "[1]", at: cachedAt), unlessNewerThan: cachedAt, liveAt: "")
        }
        let long = String(repeating: "k", count: log.maxKeySize + 1)
        await #expect(throws: CacheLogError.keyTooLong(length: log.maxKeySize + 1, maximum: log.maxKeySize)) {
            try await log.append(save("films", "[1]", at: cachedAt), unlessNewerThan: cachedAt, liveAt: long)
        }
        await #expect(throws: CacheLogError.emptyBatch) {
            try await log.append([], unlessNewerThan: cachedAt, liveAt: "films")
        }
        #expect(try log.lastSeq() == 0)
    }

    @Test func conditionalAppend_inOneGroupCommit_judgesEachBatchAfterTheBatchesBeforeIt() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        // Hold the writer, queue four appends one after the other, then let them commit together.
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let hold = Task { try await log.writer.exclusive { entered.signal(); release.wait() } }
        #expect(try await eventually(timeout: .seconds(60)) { entered.wait(timeout: .now()) == .success })
        let commitsBefore = log.writer.commits.withLock { $0 }

        let newer = cachedAt, older = cachedAt - 1
        let newerSave = save("films", "[newer]", at: newer), olderSave = save("films", "[older]", at: older)
        var outcomes: [Task<AppendOutcome, any Error>] = []
        outcomes.append(Task { try await log.append(newerSave, unlessNewerThan: newer, liveAt: "films") })
        #expect(try await eventually(timeout: .seconds(60)) { log.writer.queuedJobs == 1 })
        outcomes.append(Task { try await log.append(olderSave, unlessNewerThan: older, liveAt: "films") })
        #expect(try await eventually(timeout: .seconds(60)) { log.writer.queuedJobs == 2 })
        let plain = Task { try await log.append(.put(key: "genres", payload: payload("[]"), timestamp: older)) }
        #expect(try await eventually(timeout: .seconds(60)) { log.writer.queuedJobs == 3 })
        outcomes.append(Task { try await log.append(save("films", "[again]", at: newer), unlessNewerThan: newer, liveAt: "films") })
        #expect(try await eventually(timeout: .seconds(60)) { log.writer.queuedJobs == 4 })
        release.signal()
        try await hold.value

        #expect(try await outcomes[0].value == .appended(1...2))
        // Superseded by the put committed just before it in the same transaction.
        guard case .superseded(let live) = try await outcomes[1].value else {
            Issue.record("the older save was appended")
            return
        }
        #expect(live.seq == 2 && live.timestamp == newer)
        #expect(try await plain.value == 3)
        #expect(try await outcomes[2].value == .appended(4...5))
        #expect(log.writer.commits.withLock { $0 } == commitsBefore + 1)
        #expect(try log.retrieve("films")?.payload == payload("[again]"))
        #expect(try events(log).map(\.seq) == [1, 2, 3, 4, 5])
        #expect(try log.verify().isClean)
    }

    /// This process and `cachelog-writer` save the same seven keys at once, each with cache
    /// timestamps in a shuffled order (the writer's even, ours odd): every save that lands is at
    /// least as new as the live entry it replaces, so each key's puts in the log never go back in
    /// time and the newest cache of all is the one left live.
    @Test func twoProcesses_savingTheSameKeys_neverReplaceANewerCache() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path("db")
        let log = try makeLog(dir)
        let count = 140
        var generator = SeededGenerator(seed: 22)
        let theirs = (0..<count).map { 1_700_000_000 + 2 * Double($0) }.shuffled(using: &generator)
        let ours = (0..<count).map { 1_700_000_001 + 2 * Double($0) }.shuffled(using: &generator)
        let writer = try ChildProcess(
            try builtProduct("cachelog-writer"),
            [db, "\(count)", "--batch", "--cached-at", theirs.map { String(format: "%.0f", $0) }.joined(separator: ",")])
        // Start once the writer has its first save in, so that the two run side by side.
        _ = try await eventually(timeout: .seconds(30)) { ((try? String(contentsOf: writer.stdoutFile, encoding: .utf8)) ?? "").contains("\n") }

        var superseded = 0
        for (index, seconds) in ours.enumerated() {
            let key = "k\(index % 7)", timestamp = Date(timeIntervalSince1970: seconds)
            let outcome = try await log.append(
                [.delete(key: key, reason: .replaced), .put(key: key, payload: payload("\(seconds)"), timestamp: timestamp)],
                unlessNewerThan: timestamp, liveAt: key)
            if case .superseded(let live) = outcome {
                superseded += 1
                #expect(live.key == key && live.timestamp > timestamp)
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
            let seq = try #require(UInt64(line.dropFirst("superseded ".count)))
            let live = try #require(bySeq[seq])
            #expect(live.kind == .put && live.key == "k\(index % 7)")
            #expect(try #require(live.timestamp).timeIntervalSince1970 > theirs[index])
        }
        // Each process saved some keys out of order, so each had saves refused.
        #expect(superseded > 0 && theirsSuperseded > 0)
        for k in 0..<7 {
            let key = "k\(k)"
            let puts = recorded.filter { $0.kind == .put && $0.key == key }.compactMap(\.timestamp)
            #expect(puts == puts.sorted(), "\(key) went back in time")
            let newest = (0..<count).filter { $0 % 7 == k }.map { max(theirs[$0], ours[$0]) }.max()
            #expect(try log.entry(key)?.timestamp.timeIntervalSince1970 == newest)
        }
        // Every save either landed (two events) or was refused (none).
        #expect(recorded.count == 2 * (2 * count - superseded - theirsSuperseded))
        #expect(try log.verify().isClean)
    }
}

/// What a conditional append does not believe, and what it leaves out of a batch.
@Suite("Conditional appends: untrusted stamps and keys left out")
struct ConditionalAppendTrustTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    private func save(_ key: String, _ text: String, at timestamp: Date) -> [Event] {
        [.delete(key: key, reason: .replaced), .put(key: key, payload: Data(text.utf8), timestamp: timestamp)]
    }

    @Test func aLiveEntryStampedLaterThanTheLogsClock_neverSupersedesASave() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock(start)
        let log = try makeLog(dir, clock: clock)
        // A run whose clock was ten years ahead saved, and recorded, the cache.
        clock.set(start + 10 * 365 * 86_400)
        try await log.append(save("films", "[ahead]", at: clock.date))
        clock.set(start)

        let outcome = try await log.append(save("films", "[now]", at: start), unlessNewerThan: start, liveAt: "films")

        #expect(outcome == .appended(3...4))
        #expect(try log.retrieve("films")?.payload == Data("[now]".utf8))
    }

    @Test func aLiveEntryStampedLaterThanItWasRecorded_isJudgedFromItsRecording() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir, clock: TestClock(start))
        try await log.append(save("films", "[stamped ahead]", at: start + 86_400))

        // Recorded at `start`: newer than a save an hour before, not than one an hour after.
        #expect(try await log.append(save("films", "[older]", at: start - 3600), unlessNewerThan: start - 3600, liveAt: "films")
            == .superseded(by: try #require(try log.entry("films"))))
        #expect(try await log.append(save("films", "[later]", at: start + 3600), unlessNewerThan: start + 3600, liveAt: "films") == .appended(3...4))
    }

    @Test func aBatchWithOtherKeys_leavesOutTheEventsOfThoseWhoseLiveEntryIsNewer() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir, clock: TestClock(start))
        try await log.append(save("object:1", "{\"newer\":true}", at: start))

        let older = start - 60
        let batch = save("search:q", "[page]", at: older) + save("object:1", "{}", at: older) + save("object:2", "{}", at: older)
        let outcome = try await log.append(
            batch, unlessNewerThan: older, liveAt: "search:q", leavingNewer: ["object:1": older, "object:2": older])

        #expect(outcome == .appended(3...6, leftOut: ["object:1"]))
        #expect(try log.retrieve("object:1")?.payload == Data("{\"newer\":true}".utf8))
        #expect(try log.retrieve("object:2")?.payload == Data("{}".utf8))
        #expect(try log.retrieve("search:q")?.payload == Data("[page]".utf8))
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
