import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

@Suite("Identical payloads are stored once")
struct DeduplicationTests {
    /// 20 KB that zlib cannot shrink much (a fixed pseudo-random sequence).
    static let feed: Data = {
        var generator = SeededGenerator(seed: 0x9E37_79B9_7F4A_7C15)
        return Data(generator.bytes(20_000))
    }()

    static func save(_ log: EventLog, _ payload: Data, at seconds: TimeInterval) async throws {
        try await log.append([.delete(key: "films", reason: .replaced),
                              .put(key: "films", payload: payload, timestamp: Date(timeIntervalSince1970: seconds))])
    }

    @Test func savingAnUnchangedFeed_storesAReferenceNotASecondCopy() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await Self.save(log, Self.feed, at: 1)
        try await Self.save(log, Self.feed, at: 2)
        let puts = try events(log, EventQuery(kinds: [.put], includePayload: true))
        #expect(puts.map(\.payload) == [Self.feed, Self.feed])
        #expect(puts[1].storedBytes < 100)
        #expect(puts[0].storedBytes > 1_000)
        let value = try #require(try log.retrieve("films"))
        #expect(value.payload == Self.feed)
        #expect(value.timestamp == Date(timeIntervalSince1970: 2))
        #expect(value.seq == 4)
        #expect(try log.entry("films")?.payloadSeq == 2)
    }

    @Test func aThousandRefreshesOfAnUnchangedFeed_takeUnderFivePercentOfFullCopies() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        for i in 0..<1000 { try await Self.save(log, Self.feed, at: TimeInterval(i)) }
        let stats = try log.stats()
        let fullCopy = try events(log, EventQuery(kinds: [.put], limit: 1))[0].storedBytes
        #expect(Double(stats.storedBytes) <= 0.05 * Double(1000 * fullCopy))
    }

    @Test func aChangedFeed_isStoredInFull() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await Self.save(log, Self.feed, at: 1)
        var changed = Self.feed
        changed[100] ^= 1
        try await Self.save(log, changed, at: 2)
        #expect(try log.retrieve("films")?.payload == changed)
        #expect(try log.entry("films")?.payloadSeq == 4)
    }

    @Test func compaction_keepsTheRecordThatHoldsTheLivePayload_andRebuildMatches() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir, checkpointInterval: 4)
        for i in 0..<10 { try await Self.save(log, Self.feed, at: TimeInterval(i)) }
        let report = try await log.compact(before: .seq(try log.lastSeq()))
        #expect(report.keptLive == 1) // seq 2 holds the bytes every later put references
        #expect(try log.retrieve("films")?.payload == Self.feed)
        let stored = try RawLMDB.dump(log, \.state)
        try await log.rebuildState()
        #expect(try RawLMDB.dump(log, \.state) == stored)
        #expect(try log.verify().isClean)
    }

    @Test func corruptionInTheReferencedRecord_isReportedAtThatRecordsSeq() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await Self.save(log, Self.feed, at: 1)
        try await Self.save(log, Self.feed, at: 2)
        try RawLMDB.flipByte(of: 2, in: log, offsetFromEnd: 500)
        #expect(throws: CacheLogError.self) { _ = try log.retrieve("films") }
        let report = try log.verify()
        #expect(report.problems.map(\.seq) == [2])
    }
}

@Suite("Compaction and shared payloads")
struct CompactionWithSharedPayloadsTests {
    /// The live put and the record holding its bytes both lie before the cut, and no record after
    /// the cut refers to them: only the rule "keep the record a live put's payload lives in" keeps it.
    @Test func compact_keepsTheRecordHoldingALivePutsPayload_whenBothLieBeforeTheCut() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await DeduplicationTests.save(log, DeduplicationTests.feed, at: 1)   // seq 1, 2 (holds the bytes)
        try await DeduplicationTests.save(log, DeduplicationTests.feed, at: 2)   // seq 3, 4 (the live put, refers to seq 2)
        try await log.append(.put(key: "genres", payload: payload("[]"), timestamp: Date(timeIntervalSince1970: 3))) // seq 5
        #expect(try log.entry("films")?.payloadSeq == 2)

        let report = try await log.compact(before: .seq(5))

        #expect(try events(log).map(\.seq) == [2, 4, 5])
        #expect(report.keptLive == 2)
        #expect(try log.retrieve("films")?.payload == DeduplicationTests.feed)
        let verified = try log.verify()
        #expect(verified.isClean, "\(verified.problems)")
    }

    /// After the cut, the walk finds a put's reference in its record; when that record is damaged,
    /// the live state still names the record holding the bytes.
    @Test func compact_keepsTheRecordHoldingALivePutsPayload_evenWhenThePutsOwnRecordIsDamaged() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await DeduplicationTests.save(log, DeduplicationTests.feed, at: 1)   // seq 1, 2 (holds the bytes)
        try await DeduplicationTests.save(log, DeduplicationTests.feed, at: 2)   // seq 3, 4 (the live put, refers to seq 2)
        try RawLMDB.replace(4, with: Array(try RawLMDB.record(4, in: log).dropLast()), in: log)

        try await log.compact(before: .seq(4))

        #expect(try RawLMDB.dump(log, \.events).keys.sorted { $0.lexicographicallyPrecedes($1) } == [2, 4].map(RawLMDB.seqKey))
    }

    /// A put of the state at the cut is kept though a later save replaced it; so is the record
    /// holding its bytes, so that it still reads back.
    @Test func compact_keepsTheRecordHoldingThePayloadOfAPutOfTheStateAtTheCut() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await DeduplicationTests.save(log, DeduplicationTests.feed, at: 1)   // seq 1, 2 (holds the bytes)
        try await DeduplicationTests.save(log, DeduplicationTests.feed, at: 2)   // seq 3, 4 (refers to seq 2)
        try await DeduplicationTests.save(log, payload("[]"), at: 3)             // seq 5, 6 (replaces it)

        try await log.compact(before: .seq(5))

        #expect(try events(log).map(\.seq) == [2, 4, 5, 6])
        let kept = try events(log, EventQuery(from: .seq(4), to: .seq(4), includePayload: true))
        #expect(kept.first?.payload == DeduplicationTests.feed)
        let verified = try log.verify()
        #expect(verified.isClean, "\(verified.problems)")
    }

    @Test func compact_keepsARecordWhosePayloadAKeptPutRefersTo_evenWhenNotLive() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await DeduplicationTests.save(log, DeduplicationTests.feed, at: 1)   // seq 1, 2 (holds the bytes)
        try await DeduplicationTests.save(log, DeduplicationTests.feed, at: 2)   // seq 3, 4 (refers to seq 2)
        try await log.append(.expire(key: "films", timestamp: Date(timeIntervalSince1970: 2), maxAge: 60)) // seq 5

        let report = try await log.compact(before: .seq(3))

        #expect(report.keptLive == 1)
        #expect(try events(log).map(\.seq) == [2, 3, 4, 5])
        let replayed = try events(log, EventQuery(from: .seq(4), to: .seq(4), includePayload: true))
        #expect(replayed.first?.payload == DeduplicationTests.feed)
        let verified = try log.verify()
        #expect(verified.isClean, "\(verified.problems)")
    }
}

@Suite("Compression level")
struct CompressionLevelTests {
    @Test func compressionLevel_nineStoresSmallerThanOne_andEveryLevelReadsBack() async throws {
        let text = (0..<2000).map { "{\"id\":\($0),\"title\":\"film \($0 % 97)\",\"rating\":\($0 % 7)}" }.joined(separator: ",")
        var sizes: [Int: Int] = [:]
        for level in [1, 9] {
            let dir = try TemporaryDirectory()
            let log = try EventLog(path: dir.path(), options: .init(compressionLevel: level))
            try await log.append(.put(key: "films", payload: payload(text), timestamp: Date()))
            #expect(try log.retrieve("films")?.payload == payload(text))
            sizes[level] = try events(log)[0].storedBytes
        }
        #expect(try #require(sizes[9]) < (try #require(sizes[1])))
    }

    /// The zlib header's second byte names the level class that wrote the stream: 0x01 for
    /// level 1, 0x9C for level 6 (RFC 1950, FLEVEL).
    func levelByte(_ log: EventLog, seq: UInt64) throws -> UInt8? {
        let record = try #require(try RawLMDB.dump(log, \.events)[SeqKey.bytes(seq)])
        let header = try record.withUnsafeBytes { try EventCodec.decodeHeader($0, seq: seq) }
        return record[header.body.lowerBound + 1]
    }

    @Test func aDatabaseWrittenAtLevel6_readsBackUnchanged_andTakesNewSavesAtTheDefaultLevel() async throws {
        let dir = try TemporaryDirectory()
        let feed = payload((0..<300).map { "{\"id\":\($0),\"title\":\"film \($0 % 97)\",\"description\":\"a story of \($0 % 13) winds\"}" }.joined(separator: ","))
        let cachedAt = Date(timeIntervalSince1970: 1_800_000_000.5)
        do {
            let log = try EventLog(path: dir.path(), options: .init(compressionLevel: 6))
            try await log.append([
                .delete(key: "films", reason: .replaced),
                .put(key: "films", payload: feed, timestamp: cachedAt, maxAge: 600, metadata: ["contract": "films"]),
            ])
            #expect(try levelByte(log, seq: 2) == 0x9C)
        }
        try await waitUntilClosed(dir.path())

        let log = try EventLog(path: dir.path())
        let value = try #require(try log.retrieve("films"))
        #expect(value.payload == feed && value.timestamp == cachedAt && value.maxAge == 600 && value.metadata == ["contract": "films"])
        // Another feed, which shares too little with the first for a delta: stored whole.
        let other = payload((0..<300).map { "[\($0 &* 7919 % 1000),\"\($0 % 11)\"]" }.joined(separator: ","))
        try await log.append([.delete(key: "films", reason: .replaced), .put(key: "films", payload: other, timestamp: cachedAt + 1)])
        #expect(try levelByte(log, seq: 4) == 0x01)
        let puts = try events(log, EventQuery(includePayload: true)).filter { $0.kind == .put }
        #expect(puts.map(\.payload) == [feed, other])
        #expect(try log.verify().isClean)
    }
}
