import CLMDB
import Foundation
import TestSupport
import Testing
@testable import CacheLog

@Suite("Appending events")
struct AppendTests {
    @Test func append_assignsConsecutiveSeqsStartingAtOne() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        let first = try await log.append(.put(key: "films", payload: payload("[]"), timestamp: Date()))
        let batch = try await log.append([.delete(key: "films", reason: .replaced), .put(key: "films", payload: payload("[1]"), timestamp: Date())])
        #expect(first == 1)
        #expect(batch == 2...3)
        #expect(try log.lastSeq() == 3)
    }

    @Test func append_recordsEachKindWithItsFields() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock)
        let cachedAt = Date(timeIntervalSince1970: 1_700_000_000.25)
        try await log.append(.put(key: "films", payload: payload("[1,2,3]"), timestamp: cachedAt))
        clock.advance(60)
        try await log.append(.delete(key: "films", reason: .retrievalError))
        clock.advance(60)
        try await log.append(.expire(key: "genres", timestamp: cachedAt, maxAge: 7 * 86_400))

        let recorded = try events(log, EventQuery(includePayload: true))
        #expect(recorded.map(\.kind) == [.put, .delete, .expire])
        #expect(recorded.map(\.seq) == [1, 2, 3])
        #expect(recorded.map(\.formatVersion) == [3, 3, 3])
        #expect(recorded.map(\.recordedAt) == [clock.date - 120, clock.date - 60, clock.date])
        #expect(recorded[0].timestamp == cachedAt)
        #expect(recorded[0].payload == payload("[1,2,3]"))
        #expect(recorded[0].payloadBytes == 7)
        #expect(recorded[1].reason == .retrievalError)
        #expect(recorded[1].timestamp == nil)
        #expect(recorded[2].timestamp == cachedAt)
        #expect(recorded[2].maxAge == 604_800.0)
    }

    @Test func append_storesSeqKeysAsEightByteBigEndian() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        for i in 0..<300 { try await log.append(.put(key: "k", payload: payload("\(i)"), timestamp: Date())) }
        let keys = try RawLMDB.dump(log, \.events).keys.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(keys.count == 300)
        #expect(keys.allSatisfy { $0.count == 8 })
        #expect(keys.first == [0, 0, 0, 0, 0, 0, 0, 1])
        #expect(keys[255] == [0, 0, 0, 0, 0, 0, 1, 0])
    }

    @Test func append_neverMovesRecordedTimeBackward() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock)
        try await log.append(.delete(key: "a", reason: .explicit))
        clock.advance(-3600)
        try await log.append(.delete(key: "a", reason: .explicit))
        let recorded = try events(log)
        #expect(recorded[1].recordedAt == recorded[0].recordedAt)
    }

    @Test func append_batchIsAtomic_aBadEventAppendsNothing() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        await #expect(throws: CacheLogError.emptyKey) {
            try await log.append([.delete(key: "films", reason: .replaced), .put(key: "", payload: payload("x"), timestamp: Date())])
        }
        #expect(try log.lastSeq() == 0)
        #expect(try log.events().isEmpty)
    }

    @Test func append_rejectsAnEmptyBatch() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        await #expect(throws: CacheLogError.emptyBatch) { try await log.append([]) }
    }

    @Test func append_fromManyTasks_losesAndReordersNothing_andSharesCommits() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        let tasks = 64, perTask = 20
        let ranges = try await withThrowingTaskGroup(of: [(Int, Int, ClosedRange<UInt64>)].self) { group in
            for t in 0..<tasks {
                group.addTask {
                    var mine: [(Int, Int, ClosedRange<UInt64>)] = []
                    for i in 0..<perTask {
                        let key = "task\(t)"
                        let range = try await log.append([
                            .delete(key: key, reason: .replaced),
                            .put(key: key, payload: payload("\(t)-\(i)"), timestamp: Date()),
                        ])
                        mine.append((t, i, range))
                    }
                    return mine
                }
            }
            var all: [(Int, Int, ClosedRange<UInt64>)] = []
            for try await part in group { all += part }
            return all
        }
        #expect(ranges.count == tasks * perTask)
        #expect(ranges.allSatisfy { $0.2.count == 2 })
        let seqs = ranges.flatMap { Array($0.2) }.sorted()
        #expect(seqs == Array(1...UInt64(tasks * perTask * 2)))

        // Each task's own appends are in the log in the order it made them, delete right before put.
        let recorded = try events(log, EventQuery(includePayload: true))
        for t in 0..<tasks {
            let mine = recorded.filter { $0.key == "task\(t)" }
            let puts = mine.filter { $0.kind == .put }.compactMap { $0.payload.map { String(decoding: $0, as: UTF8.self) } }
            #expect(puts == (0..<perTask).map { "\(t)-\($0)" })
            for pair in stride(from: 0, to: mine.count, by: 2) {
                #expect(mine[pair].kind == .delete && mine[pair + 1].seq == mine[pair].seq + 1)
            }
        }
        // Group commit: the appends shared write transactions (and so their syncs).
        let commits = log.writer.commits.withLock { $0 }
        #expect(commits < tasks * perTask)
        #expect(try log.verify().isClean)
    }

    @Test func open_defaultsToSyncedCommits() throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var flags: UInt32 = 0
        mdb_env_get_flags(log.environment.raw, &flags)
        #expect(flags & UInt32(MDB_NOSYNC) == 0)
        #expect(flags & UInt32(MDB_NOTLS) != 0)
        #expect(flags & UInt32(MDB_NOMETASYNC) == 0)
    }

    #if os(Linux)
    /// The flushes are counted in a child process (`cachelog-writer`), since reopening the file
    /// would read the page cache whether or not anything reached the disk.
    @Test func unsyncedDurability_skipsTheSyncPerCommit_andSyncFlushesTheDataFile() async throws {
        let dir = try TemporaryDirectory()
        let counter = try await SyncCounter()
        let writer = try builtProduct("cachelog-writer")
        let commits = 10
        func dataFileFlushes(_ flushes: [String]) -> Int { flushes.filter { $0.hasSuffix("/data.mdb") || $0 == "msync " }.count }

        // Synced, as a reference: LMDB flushes the data file at each commit, which the counter sees.
        let synced = try await counter.run(writer, [dir.path("synced"), "\(commits)"])
        try #require(synced.result.exited && synced.result.status == 0, "\(synced.result.stderrText)")
        #expect(dataFileFlushes(synced.flushes) >= commits, "\(synced.flushes)")

        // Unsynced: no flush per commit; sync() after the last one flushes the data file.
        let unsynced = try await counter.run(writer, [dir.path("unsynced"), "\(commits)", "--unsynced"])
        try #require(unsynced.result.exited && unsynced.result.status == 0, "\(unsynced.result.stderrText)")
        #expect((1..<commits).contains(dataFileFlushes(unsynced.flushes)), "\(unsynced.flushes)")

        let reopened = try makeLog(dir, name: "unsynced")
        #expect(try reopened.lastSeq() == UInt64(commits))
        #expect(try reopened.retrieve("k2") != nil)
    }
    #endif
}
