import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

@Suite("Zeros written ahead of the pages in use")
struct DataFileHeadroomTests {
    func fileSize(_ log: EventLog) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: log.path + "/data.mdb")[.size] as? Int)
    }

    /// 8 KB that zlib cannot shrink, so every save adds pages.
    func save(_ log: EventLog, _ index: Int) async throws {
        let bytes = SeededGenerator.payload(seed: 23, index: index, count: 8192)
        try await log.append([.delete(key: "k\(index % 3)", reason: .replaced), .put(key: "k\(index % 3)", payload: bytes, timestamp: Date())])
    }

    @Test func syncedCommits_growTheFileInSteps_withZerosPastThePagesInUse() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var sizes = Set<Int>()
        for index in 0..<60 {
            try await save(log, index)
            let used = log.environment.mapUsed, size = try fileSize(log)
            #expect(size > used, "commit \(index): \(size) bytes for \(used) in use")
            sizes.insert(size)
        }
        // 60 commits of 8 KB and more each: without the zeros the file would change size at
        // every one; with them, once per half step (128 KB) of growth.
        #expect(log.environment.mapUsed > 60 * 8192)
        #expect(sizes.count <= 1 + log.environment.mapUsed / (DataFileHeadroom.minimumStep / 2), "\(sizes.sorted())")
        let tail = try #require(FileHandle(forReadingAtPath: log.path + "/data.mdb"))
        try tail.seek(toOffset: UInt64(log.environment.mapUsed))
        #expect(try #require(try tail.readToEnd()).allSatisfy { $0 == 0 })
        try tail.close()
        #expect(try log.verify().isClean)
    }

    @Test func largeCommits_getNoZerosAhead_theirJournalCommitIsSharedAlready() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        // Each append puts 40 payloads of 8 KB: about 330 KB, as a group commit of many saves does.
        func bigCommit(_ round: Int) async throws {
            try await log.append((0..<40).map { index in
                .put(key: "k\(index)", payload: SeededGenerator.payload(seed: 29, index: round * 40 + index, count: 8192), timestamp: Date())
            })
        }
        try await bigCommit(0)
        for round in 1...3 {
            try await bigCommit(round)
            #expect(try fileSize(log) == log.environment.mapUsed, "round \(round)")
        }
        // Small commits again: zeros ahead again.
        for index in 0..<3 { try await save(log, index) }
        #expect(try fileSize(log) > log.environment.mapUsed)
    }

    @Test func unsyncedCommits_leaveTheFileAtThePagesInUse() async throws {
        let dir = try TemporaryDirectory()
        let log = try EventLog(path: dir.path(), options: .init(durability: .unsynced))
        for index in 0..<20 { try await save(log, index) }
        try log.sync()
        #expect(try fileSize(log) == log.environment.mapUsed)
    }

    @Test func aFileWithZerosPastItsPages_reopens_butOneCutIntoThemIsRefused() async throws {
        let dir = try TemporaryDirectory()
        let used: Int
        do {
            let log = try makeLog(dir)
            for index in 0..<10 { try await save(log, index) }
            used = log.environment.mapUsed
        }
        try await waitUntilClosed(dir.path("db"))
        do {
            let log = try makeLog(dir, readOnly: true)
            #expect(try log.retrieve("k0")?.payload == SeededGenerator.payload(seed: 23, index: 9, count: 8192))
            #expect(try log.verify().isClean)
        }
        try await waitUntilClosed(dir.path("db"))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: dir.path("db") + "/data.mdb"))
        try handle.truncate(atOffset: UInt64(used - 4096))
        try handle.close()
        #expect(throws: CacheLogError.truncated(path: dir.path("db"), size: used - 4096, expected: used)) { try makeLog(dir) }
    }
}
