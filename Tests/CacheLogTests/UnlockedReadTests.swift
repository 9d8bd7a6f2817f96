import Foundation
import Logging
import TestSupport
import Testing
@testable import CacheLog

/// A read-only open that may not write `lock.mdb` reads without LMDB's reader table, so another
/// process's writer cannot see it. Such a read is checked afterwards: a writer reuses the pages
/// of the snapshot it read only from the third commit after it on, so one commit during the
/// read is harmless and two throw instead of answering from pages that may have been rewritten.
@Suite("Reading without the lock file")
struct UnlockedReadTests {
    @Test func unlockedRead_answersThroughOneCommitOfAnotherProcess_butThrowsWhenTwoCommitsOverlapIt() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path("db")
        do {
            let log = try makeLog(dir)
            try await log.append([.put(key: "films", payload: payload("[]"), timestamp: Date(timeIntervalSince1970: 1_800_000_000))])
        }
        let writer = try builtProduct("cachelog-writer")
        try readDuringCommits(db: db, writer: writer)
    }

    /// `Environment.read` may not be called from an async context: the reads happen here.
    private func readDuringCommits(db: String, writer: URL) throws {
        let environment = try Environment(
            path: db, readOnly: true, noSync: false, mapSize: 64 << 20, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), withoutLock: true)
        #expect(environment.unlocked)
        let tables = LogTables(environment.tables, checkpointInterval: 4096)
        /// Appends `count` saves from another process, one commit each, and waits for it.
        func commit(_ count: Int) throws {
            let process = Process()
            process.executableURL = writer
            process.arguments = [db, "\(count)"]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "cachelog-writer \(db) \(count) failed")
        }

        let throughOne = try environment.read { txn in
            let before = try tables.lastSeq(txn)
            try commit(1)
            return before
        }
        #expect(throughOne == 1)

        #expect(throws: CacheLogError.overlappedWrites(path: db)) {
            try environment.read { txn in
                let before = try tables.lastSeq(txn)
                try commit(2)
                return before
            }
        }

        // The next read, with nothing committed during it, answers again and sees the three saves.
        #expect(try environment.read { txn in try tables.lastSeq(txn) } == 4)

        // A read whose body has no effect but its result is made again after an overlap: here
        // only the first attempt meets two commits.
        var attempts = 0
        let retried = try environment.readRetryingOverlaps { txn in
            attempts += 1
            if attempts == 1 { try commit(2) }
            return try tables.lastSeq(txn)
        }
        #expect(attempts == 2 && retried == 6)

        // A writer that commits twice during every attempt outruns them all: the overlap is said.
        attempts = 0
        #expect(throws: CacheLogError.overlappedWrites(path: db)) {
            try environment.readRetryingOverlaps { txn in
                attempts += 1
                try commit(2)
                return try tables.lastSeq(txn)
            }
        }
        #expect(attempts == Environment.overlapAttempts)
    }
}
