import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 6, item 1: a writer killed with SIGKILL at random moments loses no acknowledged append,
/// tears no batch, and leaves a database that opens, verifies clean and folds to its state.
@Suite("Crash safety")
struct CrashTests {
    static let payloadBytes = 3000
    static let keys = 7

    /// One save the writer sends: save `index` of run `run` (`cachelog-writer --mixed --seed run`).
    struct Save {
        var run: Int
        var index: Int
        var isBatch: Bool { index % 2 == 1 }
        var key: String { "k\(index % CrashTests.keys)" }
        var eventCount: Int { isBatch ? 2 : 1 }
        var payload: Data { SeededGenerator.payload(seed: UInt64(run), index: index, count: CrashTests.payloadBytes) }
    }

    @Test(.hangGuard)
    func crash_sigkillAtRandomMoments_losesNoAcknowledgedAppend_andTearsNoBatch() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path()
        let writerURL = try builtProduct("cachelog-writer")
        var generator = SeededGenerator(seed: 0xC0FFEE)
        let minimumKills = 24
        let deadline = ContinuousClock.now + .seconds(20)

        var kills = 0
        var runs = 0
        var lastSeq: UInt64 = 0
        var killedMidAppend = 0
        // At least `minimumKills`, however long a loaded machine takes over them (the suite's
        // time limit guards against a hang); more while the 20 s last.
        while kills < minimumKills || (ContinuousClock.now < deadline && kills < 60) {
            runs += 1
            let run = runs
            // A tiny map, so that some kills land while the writer grows it.
            let writer = try ChildProcess(
                writerURL, [db, "100000", "--mixed", "--seed", "\(run)", "--payload-bytes", "\(Self.payloadBytes)", "--map-size", "65536"])
            let output = writer.stdoutFile.path

            // Kill it once it is appending (its first acknowledgement is out), a random moment later.
            let started = ContinuousClock.now
            while (try? Data(contentsOf: URL(fileURLWithPath: output)))?.contains(UInt8(ascii: "\n")) != true {
                guard writer.isRunning, ContinuousClock.now - started < .seconds(10) else { break }
                try await Task.sleep(for: .milliseconds(1))
            }
            try #require(writer.isRunning, "the writer of run \(run) stopped by itself")
            try await Task.sleep(for: .microseconds(Int.random(in: 0...40_000, using: &generator)))
            writer.send(SIGKILL)
            let ended = await writer.finish(timeout: .seconds(10))
            #expect(!ended.exited && !ended.timedOut && ended.status == SIGKILL)
            kills += 1

            // What the writer acknowledged: one seq range per save, in order.
            let text = ended.stdoutText
            let acknowledged: [ClosedRange<UInt64>] = text.split(separator: "\n").compactMap { line in
                let parts = line.split(separator: " ").compactMap { UInt64($0) }
                return parts.count == 2 ? parts[0]...parts[1] : nil
            }

            let (last, unacknowledgedSave) = try check(db: db, run: run, after: lastSeq, acknowledged: acknowledged)
            if unacknowledgedSave { killedMidAppend += 1 }
            lastSeq = last
            try await waitUntilClosed(db)
        }
        #expect(kills >= 20)
        #expect(runs == kills)
        #expect(lastSeq > UInt64(kills * 2), "the writers made progress across the kills")
        // Not required, but the point of random moments: some kills fall between commit and acknowledgement.
        print("crash test: \(kills) kills, \(lastSeq) events, \(killedMidAppend) kills after an unacknowledged commit")
    }

    /// Checks the database after the writer of `run` was killed. Returns the last seq, and whether
    /// one more save than acknowledged made it to disk (committed, killed before it printed).
    private func check(db: String, run: Int, after previous: UInt64, acknowledged: [ClosedRange<UInt64>]) throws -> (UInt64, Bool) {
        // The database opens (stale reader slots and a dead writer's lock are recovered).
        let log = try EventLog(path: db)
        let report = try log.verify()
        #expect(report.isClean, "run \(run): \(report.problems)")

        let items = try log.events(EventQuery(from: .seq(previous + 1), includePayload: true))
        let events = items.compactMap { item -> RecordedEvent? in
            if case .event(let event) = item { return event }
            Issue.record("run \(run): \(item)")
            return nil
        }
        let last = try log.lastSeq()
        #expect(events.map(\.seq) == Array(stride(from: previous + 1, through: last, by: 1)), "run \(run): seqs are contiguous")

        // Every acknowledged save is there, at the seqs the writer was told, with what it sent.
        var expectedSeq = previous + 1
        var saves: [Save] = []
        for (index, range) in acknowledged.enumerated() {
            let save = Save(run: run, index: index)
            #expect(range == expectedSeq...(expectedSeq + UInt64(save.eventCount) - 1), "run \(run) save \(index)")
            expectedSeq = range.upperBound + 1
            saves.append(save)
        }
        // At most one more save committed before the kill, and then whole: the log ends on a save boundary.
        let unacknowledged = last + 1 - expectedSeq
        if unacknowledged > 0 {
            let save = Save(run: run, index: acknowledged.count)
            #expect(unacknowledged == UInt64(save.eventCount), "run \(run): \(unacknowledged) events after the last acknowledged save")
            saves.append(save)
        }
        var expected: [(EventKind, String, Data?)] = []
        for save in saves {
            if save.isBatch { expected.append((.delete, save.key, nil)) }
            expected.append((.put, save.key, save.payload))
        }
        #expect(events.count == expected.count, "run \(run): the log is exactly what was sent")
        for (event, want) in zip(events, expected) {
            #expect(event.kind == want.0 && event.key == want.1 && event.payload == want.2, "run \(run): seq \(event.seq)")
        }

        // No torn batch: a delete is always followed by its put. (That the put of every batch save
        // is preceded by its delete is part of the exact comparison above; earlier runs' events
        // were checked after their own kill.)
        for (position, event) in events.enumerated() where event.kind == .delete {
            let next = position + 1 < events.count ? events[position + 1] : nil
            #expect(next?.kind == .put && next?.key == event.key, "seq \(event.seq): a delete without its put")
        }

        // The state equals the fold of the log (verify checks it too; this is the slow way).
        let state = try log.state()
        #expect(state.seq == last)
        #expect(state.entries.map(FoldedEntry.init) == bruteForceFold(try decodedEvents(log)))
        return (last, unacknowledged > 0)
    }
}

/// A writer killed with SIGKILL at random moments while it keeps applying a retention policy
/// that keeps no history (so that passes run all the time, each slice its own transaction): the
/// database opens and verifies clean after every kill, and each key's live cache is its last
/// acknowledged save (or a later one that committed before the kill): retention only ever takes
/// history, and a kill never tears what it was doing.
@Suite("Crash safety during retention")
struct RetentionCrashTests {
    @Test(.hangGuard)
    func crash_sigkillWhileRetentionRuns_keepsEveryKeysLastSave_andTheLogWhole() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path()
        let writerURL = try builtProduct("cachelog-writer")
        var generator = SeededGenerator(seed: 0xBEEF)
        // History first, written with the default policy (nothing is old enough to go), so that
        // the first pass under "no history" takes many slices, and kills land between them.
        let prefill = try await ChildProcess.run(writerURL, [db, "20000", "--batch", "--seed", "0", "--payload-bytes", "200", "--unsynced"],
                                                 timeout: .seconds(120))
        try #require(prefill.exited && prefill.status == 0, "\(prefill.stderrText)")
        var kills = 0
        var killsDuringAPass = 0
        let deadline = ContinuousClock.now + .seconds(40)
        // At least 20 kills however long a loaded machine takes over them (the time limit guards
        // against a hang); more while none landed during a pass and the 40 s last.
        while kills < 20 || (killsDuringAPass == 0 && ContinuousClock.now < deadline) {
            let run = kills + 1
            let writer = try ChildProcess(writerURL, [db, "100000", "--batch", "--seed", "\(run)", "--payload-bytes", "3000",
                                                      "--unsynced", "--retention-history", "0"])
            let output = writer.stdoutFile
            // Killed once it is saving (a save's acknowledgement is out), a random moment later.
            let saving = try await eventually(timeout: .seconds(300)) {
                ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n").count >= 2
            }
            try #require(saving && writer.isRunning, "the writer of run \(run) did not start saving")
            try await Task.sleep(for: .microseconds(Int.random(in: 0...60_000, using: &generator)))
            writer.send(SIGKILL)
            let ended = await writer.finish(timeout: .seconds(30))
            #expect(!ended.exited && ended.status == SIGKILL)
            kills += 1
            // The saves acknowledged: every line with a seq range, after the policy's line.
            let acknowledged = ended.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("policy") }.count

            try check(db: db, run: run, acknowledged: acknowledged, killsDuringAPass: &killsDuringAPass)
            try await waitUntilClosed(db)
        }
        #expect(kills >= 20)
        #expect(killsDuringAPass > 0, "no kill landed while a retention pass was under way")
        print("retention crash test: \(kills) kills, \(killsDuringAPass) during a pass")
    }

    private func check(db: String, run: Int, acknowledged: Int, killsDuringAPass: inout Int) throws {
            let log = try EventLog(path: db, options: .init(automaticRetention: false))
            let report = try log.verify()
            #expect(report.isClean, "run \(run): \(report.problems)")
            if try log.retentionStatus().lastPass?.finished == false { killsDuringAPass += 1 }
            let live = try log.state().entries
            for keyIndex in 0..<7 {
                // The last save of this key the writer was told of, and the one after it, which
                // may have committed before the kill.
                let acknowledgedSaves = stride(from: keyIndex, to: acknowledged, by: 7).map { $0 }
                guard let last = acknowledgedSaves.last else { continue }
                let candidates = [last, last + 7].map { SeededGenerator.payload(seed: UInt64(run), index: $0, count: 3000) }
                let key = "k\(keyIndex)"
                #expect(live.contains { $0.key == key }, "run \(run): \(key) is not live")
                let payload = try log.retrieve(key)?.payload
                #expect(payload.map { candidates.contains($0) } == true, "run \(run): \(key) holds neither its last acknowledged save nor the next")
            }
    }
}
