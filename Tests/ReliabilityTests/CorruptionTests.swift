import CacheLog
import FeedCache
import FeedCacheLog
import Foundation
import TestSupport
import Testing
@testable import CacheLog

/// Issue 6, item 2 (engine level): a flipped byte in a stored record is found, named by its seq,
/// never decoded into data, and the cache recovers through the use cases.
@Suite("Corruption")
struct CorruptionTests {
    @Test func corruption_flippedByteInTheLivePut_isNamedByVerify_andRetrieveThrowsCorruptRecord() async throws {
        let dir = try TemporaryDirectory()
        let log = try EventLog(path: dir.path())
        let loader = feedLoader(log)
        try await loader.save([Item(id: 1, text: "one")])
        try await loader.save([Item(id: 2, text: "two")])
        let live = try #require(try log.entry("films")).seq
        #expect(live == 4)

        try RawLMDB.flipHeaderByte(of: live, in: log)

        let report = try log.verify()
        #expect(!report.isClean)
        #expect(report.problems.contains { $0.seq == live && $0.message.hasPrefix("corrupt record") })
        #expect(report.problems.allSatisfy { $0.seq == live })
        #expect {
            _ = try log.retrieve("films")
        } throws: { error in
            guard case CacheLogError.corruptRecord(let seq, _) = error else { return false }
            return seq == live
        }
        // Through the use case it is a retrieval error, not data.
        await #expect(throws: CacheLogError.self) { _ = try await loader.load() }
    }

    @Test func corruption_validateRecordsADeleteForRetrievalError_andTheCacheWorksAgain() async throws {
        let dir = try TemporaryDirectory()
        let log = try EventLog(path: dir.path())
        let loader = feedLoader(log)
        try await loader.save([Item(id: 1, text: "one")])
        let live = try #require(try log.entry("films")).seq
        try RawLMDB.flipHeaderByte(of: live, in: log)

        try await loader.validateCache()

        guard case .event(let last) = try #require(try log.events().last) else {
            Issue.record("the last record is not a readable event")
            return
        }
        #expect(last.kind == .delete && last.key == "films" && last.reason == .retrievalError)
        #expect(last.seq == live + 1)
        #expect(try log.entry("films") == nil)
        #expect(try await loader.load() == [])

        try await loader.save([Item(id: 2, text: "two")])
        #expect(try await loader.load() == [Item(id: 2, text: "two")])
        // The state agrees with the fold again; only the bad record itself is still reported.
        let report = try log.verify()
        #expect(report.problems.map(\.seq) == [live])
    }

    @Test func corruption_replayShowsTheBadRecordAsCorrupt_andGoesOnPastIt() async throws {
        let dir = try TemporaryDirectory()
        let log = try EventLog(path: dir.path())
        for i in 1...5 { try await log.append(.put(key: "k\(i)", payload: Data("payload \(i)".utf8), timestamp: Date())) }
        var record = try RawLMDB.record(3, in: log)
        record[10] ^= 0x01 // in recordedAt: the header itself is wrong, and the checksum says so
        try RawLMDB.replace(3, with: record, in: log)

        for includePayload in [false, true] {
            let items = try log.events(EventQuery(includePayload: includePayload))
            #expect(items.map(\.seq) == [1, 2, 3, 4, 5])
            guard case .corrupt(let seq, let detail) = items[2] else {
                Issue.record("seq 3 decoded as \(items[2])")
                continue
            }
            #expect(seq == 3 && detail.contains("checksum"))
            #expect(items.enumerated().allSatisfy { index, item in
                if case .event = item { return index != 2 }
                return index == 2
            })
        }
        // A kind filter reports the bad record whatever the kinds; a key read goes through the key
        // index, which lists the record under the key it was appended with.
        #expect(try log.events(EventQuery(kinds: [.delete])).map(\.seq) == [3])
        #expect(try log.events(EventQuery(key: "k5")).map(\.seq) == [5])
        #expect(try log.events(EventQuery(key: "k3")).map(\.seq) == [3])
        #expect(try log.events(EventQuery(reverse: true)).map(\.seq) == [5, 4, 3, 2, 1])
        #expect(try log.retrieve("k4")?.payload == Data("payload 4".utf8))
        #expect(try log.retrieve("k5")?.payload == Data("payload 5".utf8))
    }
}
