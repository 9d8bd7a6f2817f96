import CLMDB
import Foundation
import TestSupport
import Testing
@testable import CacheLog

@Suite("State, rebuild and time travel")
struct StateTests {
    /// A history with every kind of event over several keys, with the clock moving a minute per append.
    static func appendHistory(_ log: EventLog, clock: TestClock, count: Int) async throws {
        var putAt: [String: Date] = [:]
        for i in 0..<count {
            let key = "key\(i % 5)"
            switch i % 4 {
            case 0, 1:
                try await log.append([.delete(key: key, reason: .replaced), .put(key: key, payload: payload("v\(i)"), timestamp: clock.date)])
                putAt[key] = clock.date
            case 2:
                // Half the expires judge the live version, half a version already replaced.
                let judged = i % 8 == 2 ? putAt[key] ?? clock.date : clock.date - 86_400
                try await log.append(.expire(key: key, timestamp: judged, maxAge: 3600))
            default:
                try await log.append(.delete(key: key, reason: .explicit))
            }
            clock.advance(60)
        }
    }

    /// The state after `seq`, folded by hand from the recorded events.
    static func bruteForceState(_ log: EventLog, at seq: UInt64) throws -> [LogState.Entry] {
        var live: [String: LogState.Entry] = [:]
        for event in try events(log, EventQuery(to: .seq(seq))) {
            switch event.kind {
            case .put:
                var entry = LogState.Entry(key: event.key, seq: event.seq, timestamp: event.timestamp ?? .distantPast, bytes: event.payloadBytes)
                entry.recordedAt = event.recordedAt
                live[event.key] = entry
            case .delete:
                live[event.key] = nil
            case .expire:
                if live[event.key]?.timestamp == event.timestamp { live[event.key] = nil }
            case .retention:
                continue
            }
        }
        return live.values.sorted { $0.key < $1.key }
    }

    @Test func state_isUpdatedInTheAppendsTransaction() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock)
        try await log.append([.delete(key: "films", reason: .replaced), .put(key: "films", payload: payload("[1]"), timestamp: clock.date)])
        var put = LogState.Entry(key: "films", seq: 2, timestamp: clock.date, bytes: 3)
        put.recordedAt = clock.date
        #expect(try log.state().entries == [put])
        try await log.append(.expire(key: "films", timestamp: clock.date, maxAge: 60))
        #expect(try log.state().entries.isEmpty)
        #expect(try log.retrieve("films") == nil)
    }

    @Test func rebuild_producesAStateIdenticalToTheStoredOne() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock, checkpointInterval: 16)
        try await Self.appendHistory(log, clock: clock, count: 203)
        let storedState = try RawLMDB.dump(log, \.state)
        let storedCheckpoints = try RawLMDB.dump(log, \.checkpoints)
        #expect(!storedState.isEmpty)

        // Drop the stored state entirely, then rebuild it from the log alone.
        try RawLMDB.write(log) { txn, dbs in
            #expect(mdb_drop(txn, dbs.state, 0) == MDB_SUCCESS)
            #expect(mdb_drop(txn, dbs.checkpoints, 0) == MDB_SUCCESS)
        }
        #expect(try log.state().entries.isEmpty)
        let report = try await log.rebuildState()

        #expect(try RawLMDB.dump(log, \.state) == storedState)
        #expect(try RawLMDB.dump(log, \.checkpoints) == storedCheckpoints)
        #expect(report.eventsFolded == Int(try log.lastSeq()))
        #expect(try log.verify().isClean)
    }

    @Test func rebuild_readsHeadersOnly_neverInflatesAPayload() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(.put(key: "films", payload: payload("[1,2,3]"), timestamp: Date()))
        try await log.append(.put(key: "genres", payload: payload("{}"), timestamp: Date()))
        let before = try RawLMDB.dump(log, \.state)
        // Both bodies now fail any inflate, but their checksums and headers are sound.
        try plantUninflatableBody(seq: 1, in: log)
        try plantUninflatableBody(seq: 2, in: log)

        let report = try await log.rebuildState()
        #expect(report.corruptSeqs.isEmpty)
        #expect(try RawLMDB.dump(log, \.state) == before)
    }

    @Test func stateAsOf_everySeq_equalsTheFoldOfTheLogUpToIt() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock, checkpointInterval: 8)
        try await Self.appendHistory(log, clock: clock, count: 60)
        let last = try log.lastSeq()
        for seq in 0...last {
            let state = try log.state(asOf: .seq(seq))
            #expect(state.seq == seq)
            #expect(state.entries == (try Self.bruteForceState(log, at: seq)), "as of seq \(seq)")
        }
        #expect(try log.state(asOf: .seq(last + 100)).entries == (try log.state().entries))
    }

    @Test func stateAsOfADate_isTheStateAfterTheLastEventRecordedByThen() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let start = clock.date
        let log = try makeLog(dir, clock: clock)
        try await log.append(.put(key: "films", payload: payload("[1]"), timestamp: clock.date)) // seq 1 at +0
        clock.advance(3600)
        try await log.append(.expire(key: "films", timestamp: start, maxAge: 60)) // seq 2 at +1h

        #expect(try log.state(asOf: .date(start - 1)).entries.isEmpty)
        #expect(try log.state(asOf: .date(start)).entries.map(\.key) == ["films"])
        #expect(try log.state(asOf: .date(start + 3599)).entries.map(\.key) == ["films"])
        #expect(try log.state(asOf: .date(start + 3599)).seq == 1)
        #expect(try log.state(asOf: .date(start + 3600)).entries.isEmpty)
    }

    @Test func stateAsOf_isServedFromTheNearestCheckpoint_notFromTheStartOfTheLog() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock, checkpointInterval: 10)
        try await Self.appendHistory(log, clock: clock, count: 80)
        let target = try log.lastSeq() - 3
        let expected = try log.state(asOf: .seq(target))
        let checkpoints = try RawLMDB.dump(log, \.checkpoints).keys.compactMap { key in key.withUnsafeBytes { SeqKey.decode($0) } }
        let nearest = try #require(checkpoints.filter { $0 <= target }.max())
        #expect(target - nearest < 20)

        // Remove every record up to the checkpoint: a fold from the start could no longer work.
        try RawLMDB.write(log) { txn, dbs in
            for seq in 1...nearest { RawLMDB.delete(txn, dbs.events, SeqKey.bytes(seq)) }
        }
        #expect(try log.state(asOf: .seq(target)) == expected)
    }
}

@Suite("Expire semantics")
struct ExpireTests {
    @Test func expire_removesOnlyTheVersionItJudged() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        let old = Date(timeIntervalSince1970: 1_000), new = Date(timeIntervalSince1970: 2_000)
        try await log.append(.put(key: "films", payload: payload("old"), timestamp: old))
        // A save lands between validation's read (which saw `old`) and its expire.
        try await log.append([.delete(key: "films", reason: .replaced), .put(key: "films", payload: payload("new"), timestamp: new)])
        try await log.append(.expire(key: "films", timestamp: old, maxAge: 60))
        #expect(try log.retrieve("films")?.payload == payload("new"))
        try await log.append(.expire(key: "films", timestamp: new, maxAge: 60))
        #expect(try log.retrieve("films") == nil)
        #expect(try log.verify().isClean)
        #expect(try log.state(asOf: .seq(4)).entries.map(\.timestamp) == [new])
    }
}

@Suite("Rebuild and checkpoints")
struct RebuildCheckpointTests {
    @Test func rebuild_keepsCheckpointsWhereAppendsPutThem_andRewritesNone() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir, checkpointInterval: 10)
        // Batches of 7: appends check for a checkpoint at batch ends, so they land at 14, 28, ….
        for batch in 0..<10 {
            try await log.append((0..<7).map { .put(key: "k\(($0 + batch) % 3)", payload: payload("\(batch)-\($0)"), timestamp: Date()) })
        }
        let stored = try RawLMDB.dump(log, \.checkpoints)
        #expect(stored.keys.compactMap { key in key.withUnsafeBytes { SeqKey.decode($0) } }.sorted() == [14, 28, 42, 56, 70])
        try await log.rebuildState()
        #expect(try RawLMDB.dump(log, \.checkpoints) == stored)
        #expect(try log.verify().isClean)
    }
}

@Suite("The state fold's key table")
struct StateTableTests {
    @Test func fold_overManyKeys_matchesANaiveFold_inBytewiseKeyOrder() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock, checkpointInterval: 64)
        // Keys of many lengths sharing prefixes, with non-ASCII ones: LMDB orders them by bytes.
        let keys = (0..<300).map { i in
            ["image:https://example.com/\(i)", "search:\(i % 17)", "é\(i)", "k\(String(repeating: "x", count: i % 9))\(i)"][i % 4]
        }
        var state: UInt64 = 7
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % bound
        }
        var naive: [String: LogState.Entry] = [:]
        for _ in 0..<3000 {
            let key = keys[next(keys.count)]
            clock.advance(1)
            switch next(4) {
            case 0, 1:
                let seq = try await log.append(.put(key: key, payload: payload("\(next(1000))"), timestamp: clock.date))
                naive[key] = LogState.Entry(key: key, seq: seq, timestamp: clock.date, bytes: try #require(try log.entry(key)).bytes)
            case 2:
                try await log.append(.delete(key: key, reason: .explicit))
                naive[key] = nil
            default:
                let judged = naive[key]?.timestamp ?? clock.date
                try await log.append(.expire(key: key, timestamp: judged, maxAge: 1))
                naive[key] = nil
            }
        }
        let expected = naive.values.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        #expect(try log.state(asOf: .seq(try log.lastSeq())).entries.map(\.key) == expected.map(\.key))
        #expect(try log.state(asOf: .seq(try log.lastSeq())).entries.map(\.seq) == expected.map(\.seq))
        let stored = try RawLMDB.dump(log, \.state)
        try await log.rebuildState()
        #expect(try RawLMDB.dump(log, \.state) == stored)
        #expect(try log.verify().isClean)
    }
}
