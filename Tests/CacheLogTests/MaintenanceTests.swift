import CLMDB
import Foundation
import TestSupport
import Testing
@testable import CacheLog

@Suite("Verify and compaction")
struct MaintenanceTests {
    @Test func verify_isCleanOnAHealthyLog() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock, checkpointInterval: 4)
        try await StateTests.appendHistory(log, clock: clock, count: 30)
        let report = try log.verify()
        #expect(report.isClean, "\(report.problems)")
        #expect(report.recordsChecked == Int(try log.lastSeq()))
        #expect(report.checkpointsChecked > 0)
    }

    @Test func verify_namesTheSeqOfAFlippedByte() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        for i in 0..<5 { try await log.append(.put(key: "k\(i)", payload: payload("value \(i)"), timestamp: Date())) }
        try RawLMDB.flipHeaderByte(of: 4, in: log)
        let report = try log.verify()
        #expect(!report.isClean)
        #expect(report.problems.first?.seq == 4)
        #expect(report.problems.first?.message.contains("corrupt record") == true)
    }

    @Test func verify_reportsAStateThatDisagreesWithTheLog() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(.put(key: "films", payload: payload("[1]"), timestamp: Date()))
        try RawLMDB.write(log) { txn, dbs in
            let stale = StateRowCodec.encode(LogState.Entry(key: "ghost", seq: 1, timestamp: Date(), bytes: 3))
            #expect(RawLMDB.put(txn, dbs.state, Array("ghost".utf8), stale) == MDB_SUCCESS)
        }
        let report = try log.verify()
        #expect(report.problems.map(\.description) == ["seq 1: state of key \"ghost\" is live at seq 1, the log says absent"])
    }

    @Test func verify_namesTheFieldsOfARowThatDiffersOnlyBeyondItsSeq() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        let cachedAt = Date(timeIntervalSince1970: 1_796_119_200)
        try await log.append(.put(key: "films", payload: payload("[1]"), timestamp: cachedAt))
        try RawLMDB.write(log) { txn, dbs in
            let wrongSize = StateRowCodec.encode(LogState.Entry(key: "films", seq: 1, timestamp: cachedAt, bytes: 99))
            #expect(RawLMDB.put(txn, dbs.state, Array("films".utf8), wrongSize) == MDB_SUCCESS)
        }
        #expect(try log.verify().problems.map(\.description) == [
            "seq 1: state of key \"films\" is live at seq 1 (cached at 1796119200.0, 99 bytes, payload at seq 1), the log says live at seq 1 (cached at 1796119200.0, 3 bytes, payload at seq 1)",
        ])
    }

    @Test func verify_reportsAGapInTheLog() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        for _ in 0..<4 { try await log.append(.delete(key: "k", reason: .explicit)) }
        try RawLMDB.write(log) { txn, dbs in RawLMDB.delete(txn, dbs.events, SeqKey.bytes(2)) }
        #expect(try log.verify().problems.map(\.description) == ["seq 2: record missing"])
    }

    @Test func verify_reportsTheFirstRecordsMissing_beforeAnyCompaction() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        for _ in 0..<4 { try await log.append(.delete(key: "k", reason: .explicit)) }
        try RawLMDB.write(log) { txn, dbs in
            RawLMDB.delete(txn, dbs.events, SeqKey.bytes(1))
            RawLMDB.delete(txn, dbs.events, SeqKey.bytes(2))
        }
        #expect(try log.verify().problems.map(\.description) == ["seq 1: records missing, seq 1 through 2"])
    }

    @Test func compact_dropsOldHistoryButKeepsWhatTheLiveStateReferences() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock, checkpointInterval: 8)
        try await log.append(.put(key: "keep", payload: payload("kept"), timestamp: clock.date)) // seq 1, stays live
        try await StateTests.appendHistory(log, clock: clock, count: 40)
        let last = try log.lastSeq()
        let cut = last - 10
        let stateAtCut = try log.state(asOf: .seq(cut))
        let stateAtBase = try log.state(asOf: .seq(cut - 1))
        let stateNow = try log.state()

        let report = try await log.compact(before: .seq(cut))

        #expect(report.firstAvailable == cut - 1)
        let remaining = try events(log).map(\.seq)
        #expect(remaining.first == 1)
        // What stays before the cut is what the state now, or the state at the cut, uses.
        #expect(remaining.filter { $0 < cut }.allSatisfy { seq in (stateNow.entries + stateAtBase.entries).contains { $0.seq == seq } })
        #expect(try log.state(asOf: .seq(cut - 1)) == stateAtBase)
        #expect(Array(remaining.drop { $0 < cut }) == Array(cut...last))
        #expect(try log.retrieve("keep")?.payload == payload("kept"))
        #expect(try log.state() == stateNow)
        #expect(try log.state(asOf: .seq(cut)) == stateAtCut)
        #expect(throws: CacheLogError.historyCompacted(firstAvailable: cut - 1)) { _ = try log.state(asOf: .seq(cut - 2)) }
        let verified = try log.verify()
        #expect(verified.isClean, "\(verified.problems)")

        // The log stays valid for every other operation afterwards.
        let beforeRebuild = try RawLMDB.dump(log, \.state)
        try await log.rebuildState()
        #expect(try RawLMDB.dump(log, \.state) == beforeRebuild)
        try await log.append([.delete(key: "keep", reason: .replaced), .put(key: "keep", payload: payload("new"), timestamp: clock.date)])
        #expect(try log.retrieve("keep")?.payload == payload("new"))
        #expect(try log.verify().isClean)
        let again = try await log.compact(before: .seq(try log.lastSeq() + 1))
        #expect(again.firstAvailable == (try log.lastSeq()))
        #expect(try log.verify().isClean)
        #expect(try log.state() == (try log.state(asOf: .seq(try log.lastSeq()))))
    }
}

@Suite("A damaged state row")
struct DamagedStateTests {
    @Test func malformedStateRow_readsAnswerFromTheLog_verifyNamesIt_andRebuildRepairsIt() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        let cachedAt = Date(timeIntervalSince1970: 1_796_119_200)
        try await log.append(.put(key: "films", payload: payload("[1]"), timestamp: cachedAt))
        try await log.append(.put(key: "genres", payload: payload("[2]"), timestamp: cachedAt))
        let state = try log.state()
        try RawLMDB.write(log) { txn, dbs in
            #expect(RawLMDB.put(txn, dbs.state, Array("films".utf8), [1, 2, 3]) == MDB_SUCCESS)
        }
        #expect(try log.retrieve("films")?.payload == payload("[1]"))
        #expect(try log.entry("films") == state.entry(for: "films"))
        #expect(try log.state() == state)
        let report = try log.verify()
        #expect(report.problems.map(\.description) == [CacheLogError.corruptStateRow(key: "films").description])

        let rebuilt = try await log.rebuildState()
        #expect(rebuilt.repairedKeys == ["films"])
        #expect(try log.verify().isClean)
        #expect(try await log.rebuildState().repairedKeys == [])
    }

    @Test func stateRowPointingAtAnotherKeysPut_retrieveServesTheKeysOwnPayload() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(.put(key: "films", payload: payload("[1]"), timestamp: Date()))
        try await log.append(.put(key: "genres", payload: payload("[2]"), timestamp: Date()))
        let genresRow = try #require(try RawLMDB.dump(log, \.state)[Array("genres".utf8)])
        try RawLMDB.write(log) { txn, dbs in
            #expect(RawLMDB.put(txn, dbs.state, Array("films".utf8), genresRow) == MDB_SUCCESS)
        }
        #expect(try log.retrieve("films")?.payload == payload("[1]"))
        #expect(!(try log.verify().isClean))
    }

    @Test func expireOfAKeyWithAMalformedRow_removesTheRow() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        let cachedAt = Date(timeIntervalSince1970: 4_102_444_800.123) // 2100: far from Date's reference
        try await log.append(.put(key: "films", payload: payload("[1]"), timestamp: cachedAt))
        try RawLMDB.write(log) { txn, dbs in
            #expect(RawLMDB.put(txn, dbs.state, Array("films".utf8), [1, 2, 3]) == MDB_SUCCESS)
        }
        try await log.append(.expire(key: "films", timestamp: cachedAt, maxAge: 60))
        #expect(try RawLMDB.dump(log, \.state).isEmpty)
        #expect(try log.verify().isClean)
    }
}

@Suite("A damaged checkpoint")
struct DamagedCheckpointTests {
    @Test func stateAsOf_andCompaction_passADamagedCheckpointForAnEarlierOneOrTheLog() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock, checkpointInterval: 4)
        try await StateTests.appendHistory(log, clock: clock, count: 40)
        let checkpoints = try RawLMDB.dump(log, \.checkpoints).keys.compactMap { key in key.withUnsafeBytes { SeqKey.decode($0) } }.sorted()
        try #require(checkpoints.count >= 3)
        let expected = try (1...(try log.lastSeq())).map { try log.state(asOf: .seq($0)) }
        // The first checkpoint (nothing earlier: the log from its start) and a later one.
        try RawLMDB.write(log) { txn, dbs in
            for seq in [checkpoints[0], checkpoints[2]] {
                #expect(RawLMDB.put(txn, dbs.checkpoints, SeqKey.bytes(seq), [0, 0, 0, 0, 9, 9, 9, 9]) == MDB_SUCCESS)
            }
        }
        for (index, state) in expected.enumerated() {
            #expect(try log.state(asOf: .seq(UInt64(index + 1))) == state)
        }
        #expect(Set(try log.verify().problems.compactMap(\.seq)) == [checkpoints[0], checkpoints[2]])

        let cut = checkpoints[2] + 2
        try await log.compact(before: .seq(cut))
        #expect(try log.state(asOf: .seq(cut)) == expected[Int(cut) - 1])
        #expect(try log.verify().isClean)
    }
}

@Suite("Damage the reads get past")
struct DamageReadTests {
    @Test func aRowForAKeyTheLogDoesNotHold_isAStateError_soValidationDeletesIt() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(.put(key: "films", payload: payload("[1]"), timestamp: Date()))
        let filmsRow = try #require(try RawLMDB.dump(log, \.state)[Array("films".utf8)])
        try RawLMDB.write(log) { txn, dbs in
            #expect(RawLMDB.put(txn, dbs.state, Array("ghost".utf8), filmsRow) == MDB_SUCCESS)
        }
        #expect(throws: CacheLogError.corruptStateRow(key: "ghost")) { _ = try log.retrieve("ghost") }
        #expect(try log.retrieve("films")?.payload == payload("[1]"))

        // A delete removes the row, so the state is the log's again.
        try await log.append(.delete(key: "ghost", reason: .retrievalError))
        #expect(try log.verify().isClean)
    }

    @Test func rebuild_leavesOutAPutWhoseKeyDamageMadeInvalidUTF8() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(.put(key: "films", payload: payload("[1]"), timestamp: Date()))
        try RawLMDB.write(log) { txn, dbs in
            var record = try #require(RawLMDB.get(txn, dbs.events, SeqKey.bytes(1)))
            record[EventCodec.headerSize + 1] = 0xFF // "films" -> "f\xFFlms": no key is that
            #expect(RawLMDB.put(txn, dbs.events, SeqKey.bytes(1), record) == MDB_SUCCESS)
        }
        try await log.rebuildState()
        #expect(try RawLMDB.dump(log, \.state).isEmpty, "a key no one can name is no cache")
        #expect(try log.verify().problems.map(\.seq) == [1], "the damaged record, and nothing else")
    }

    @Test func stateAsOfADate_passesARecordWhoseFramingIsDamaged() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock)
        var times: [Date] = []
        for index in 0..<5 {
            times.append(clock.date)
            try await log.append(.put(key: "k\(index)", payload: payload("[\(index)]"), timestamp: clock.date))
            clock.advance(60)
        }
        let expected = try (1...5).map { try log.state(asOf: .date(times[$0 - 1])) }
        try RawLMDB.write(log) { txn, dbs in
            let record = try #require(RawLMDB.get(txn, dbs.events, SeqKey.bytes(3)))
            #expect(RawLMDB.put(txn, dbs.events, SeqKey.bytes(3), record + [0, 0, 0]) == MDB_SUCCESS)
        }
        for (index, time) in times.enumerated() where index != 2 {
            #expect(try log.state(asOf: .date(time)).seq == expected[index].seq)
        }
    }
}
