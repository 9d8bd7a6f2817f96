import CLMDB
import Foundation
import TestSupport
import Testing
@testable import CacheLog

/// Every path that folds the log (appends, rebuild, time travel, verify) must agree, whatever the
/// log holds: damaged bytes, damaged state rows, unusual keys and timestamps.
@Suite("Folds agree")
struct ConsistencyTests {
    @Test func damagedPayloadBytes_areReportedByVerify_butEveryFoldStillCountsTheRecord() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(.put(key: "films", payload: payload("[1]"), timestamp: Date()))
        try await log.append(.put(key: "films", payload: payload("[2]"), timestamp: Date()))
        try await log.append(.put(key: "other", payload: payload("o"), timestamp: Date()))
        try RawLMDB.flipByte(of: 2, in: log)

        #expect(try log.verify().problems.map(\.seq) == [2])
        let report = try await log.rebuildState()
        #expect(report.liveKeys == 2)
        #expect(try log.verify().problems.map(\.seq) == [2], "a rebuild cannot clear damage, nor add a mismatch")
        #expect(try log.state(asOf: .seq(3)).entries == (try log.state().entries))
    }

    @Test func damagedStateRow_blocksNoAppend_andThePutReplacesIt() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir, checkpointInterval: 1)
        try await log.append(.put(key: "films", payload: payload("[1]"), timestamp: Date()))
        try RawLMDB.write(log) { txn, dbs in
            #expect(RawLMDB.put(txn, dbs.state, Array("films".utf8), [1, 2, 3]) == MDB_SUCCESS)
        }
        // Other keys keep working while the row is damaged, checkpoints included.
        for i in 0..<3 { try await log.append(.put(key: "other\(i)", payload: payload("x"), timestamp: Date())) }
        // The recovery path: delete on retrieval error, then save again.
        try await log.append(.delete(key: "films", reason: .retrievalError))
        try await log.append(.put(key: "films", payload: payload("[2]"), timestamp: Date()))
        #expect(try log.retrieve("films")?.payload == payload("[2]"))
        #expect(try log.verify().isClean)
    }

    @Test func canonicallyEquivalentKeys_areDifferentKeys_asLMDBSeesThem() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir, checkpointInterval: 1)
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        try await log.append(.put(key: composed, payload: payload("nfc"), timestamp: Date()))
        try await log.append(.put(key: decomposed, payload: payload("nfd"), timestamp: Date()))
        for i in 0..<4 { try await log.append(.delete(key: "z\(i)", reason: .explicit)) }

        let verified = try log.verify()
        #expect(verified.isClean, "\(verified.problems)")
        let state = try log.state()
        #expect(state.entries.count == 2)
        #expect(state.entry(for: composed)?.seq == 1)
        #expect(state.entry(for: decomposed)?.seq == 2)
        #expect(try log.retrieve(composed)?.payload == payload("nfc"))
        #expect(try log.retrieve(decomposed)?.payload == payload("nfd"))
    }

    @Test func aDamagedPayloadReference_leavesTheLiveCountRight() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(.put(key: "k", payload: payload("AAAA"), timestamp: Date()))
        try await log.append([.delete(key: "k", reason: .replaced), .put(key: "k", payload: payload("AAAA"), timestamp: Date())])
        // Seq 3 is a reference to seq 1; make its 8-byte body point forward, which no reference may.
        try RawLMDB.write(log) { txn, dbs in
            var record = try #require(RawLMDB.get(txn, dbs.events, SeqKey.bytes(3)))
            let header = try record.withUnsafeBytes { try EventCodec.decodeHeader($0, seq: 3) }
            #expect(header.isReference)
            for (offset, byte) in SeqKey.bytes(99).enumerated() { record[header.body.lowerBound + offset] = byte }
            #expect(RawLMDB.put(txn, dbs.events, SeqKey.bytes(3), record) == MDB_SUCCESS)
        }
        let report = try await log.rebuildState()
        #expect(report.corruptSeqs == [3])
        #expect(report.liveKeys == (try log.state().entries.count))
    }

    @Test func anExpireOfANaNTimestamp_isFoldedAlikeEverywhere() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        let nan = Date(timeIntervalSince1970: .nan)
        try await log.append(.put(key: "k", payload: payload("x"), timestamp: nan))
        try await log.append(.expire(key: "k", timestamp: nan, maxAge: 1))
        #expect(try log.state().entries.isEmpty)
        #expect(try log.state(asOf: .seq(2)).entries.isEmpty)
        #expect(try log.verify().isClean)
    }
}
