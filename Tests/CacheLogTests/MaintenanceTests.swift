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
        try await ProjectionTests.appendHistory(log, clock: clock, count: 30)
        let report = try log.verify()
        #expect(report.isClean, "\(report.problems)")
        #expect(report.recordsChecked == Int(try log.lastSeq()))
        #expect(report.checkpointsChecked > 0)
    }

    @Test func verify_namesTheSeqOfAFlippedByte() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        for i in 0..<5 { try await log.append(.put(key: "k\(i)", payload: payload("value \(i)"), timestamp: Date())) }
        try RawLMDB.flipByte(of: 4, in: log, offsetFromEnd: 30)
        let report = try log.verify()
        #expect(!report.isClean)
        #expect(report.problems.first?.seq == 4)
        #expect(report.problems.first?.message.contains("corrupt record") == true)
    }

    @Test func verify_reportsAProjectionThatDisagreesWithTheLog() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(.put(key: "films", payload: payload("[1]"), timestamp: Date()))
        try RawLMDB.write(log) { txn, dbs in
            let stale = ProjectionEntryCodec.encode(LiveEntry(key: "ghost", seq: 1, timestamp: Date(), bytes: 3))
            #expect(RawLMDB.put(txn, dbs.state, Array("ghost".utf8), stale) == MDB_SUCCESS)
        }
        let report = try log.verify()
        #expect(report.problems.map(\.description) == ["seq 1: projection of key \"ghost\" is live at seq 1, the log says absent"])
    }

    @Test func verify_reportsAGapInTheLog() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        for _ in 0..<4 { try await log.append(.delete(key: "k", reason: .explicit)) }
        try RawLMDB.write(log) { txn, dbs in RawLMDB.delete(txn, dbs.events, SeqKey.bytes(2)) }
        #expect(try log.verify().problems.map(\.seq) == [3])
    }

    @Test func compact_dropsOldHistoryButKeepsWhatTheLiveStateReferences() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock, checkpointInterval: 8)
        try await log.append(.put(key: "keep", payload: payload("kept"), timestamp: clock.date)) // seq 1, stays live
        try await ProjectionTests.appendHistory(log, clock: clock, count: 40)
        let last = try log.lastSeq()
        let cut = last - 10
        let stateAtCut = try log.state(asOf: .seq(cut))
        let stateNow = try log.state()

        let report = try await log.compact(before: .seq(cut))

        #expect(report.firstAvailable == cut - 1)
        let remaining = try events(log).map(\.seq)
        #expect(remaining.first == 1)
        #expect(remaining.filter { $0 < cut }.allSatisfy { seq in stateNow.entries.contains { $0.seq == seq } })
        #expect(Array(remaining.drop { $0 < cut }) == Array(cut...last))
        #expect(try log.retrieve("keep")?.payload == payload("kept"))
        #expect(try log.state() == stateNow)
        #expect(try log.state(asOf: .seq(cut)) == stateAtCut)
        #expect(throws: CacheLogError.historyCompacted(firstAvailable: cut - 1)) { _ = try log.state(asOf: .seq(cut - 2)) }
        let verified = try log.verify()
        #expect(verified.isClean, "\(verified.problems)")

        // The log stays valid for every other operation afterwards.
        let beforeRebuild = try RawLMDB.dump(log, \.state)
        try await log.rebuildProjection()
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

@Suite("A damaged projection row")
struct DamagedProjectionTests {
    @Test func malformedStateRow_isATypedErrorForRetrieve_aProblemForVerify_andRebuildRestoresIt() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(.put(key: "films", payload: payload("[1]"), timestamp: Date()))
        try RawLMDB.write(log) { txn, dbs in
            #expect(RawLMDB.put(txn, dbs.state, Array("films".utf8), [1, 2, 3]) == MDB_SUCCESS)
        }
        #expect(throws: CacheLogError.corruptProjection(key: "films")) { _ = try log.retrieve("films") }
        let report = try log.verify()
        #expect(report.problems.contains { $0.message.contains("projection row for key \"films\" is malformed") })

        try await log.rebuildProjection()
        #expect(try log.retrieve("films")?.payload == payload("[1]"))
        #expect(try log.verify().isClean)
    }
}
