import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

/// Issue 31: a save of a key makes its delta from the payload this log last saved for the key,
/// and a load takes the bytes from there, instead of inflating them again; what it remembers is
/// the record's payload, at the record's seq, and damage is reported as without it.
@Suite("Remembered payloads", .hangGuard)
struct RecentPayloadsTests {
    /// A save remembers its payload with the seq and CRC-32 the writer stored it with, reading
    /// nothing back.
    @Test func aSave_remembersItsPayloadAtTheSeqAndChecksumOfItsRecord() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 31)
        var feed = FilmFeed(count: 100, using: &generator)
        let whole = try await DeltaTests.save(log, feed.payload, at: 1)
        feed.change(2, using: &generator)
        let delta = try await DeltaTests.save(log, feed.payload, at: 2)

        let remembered = try #require(log.recentPayloads.version(of: Array("films".utf8)))
        #expect(remembered.seq == delta)
        #expect(remembered.payload == feed.payload)
        #expect(try DeltaTests.rawPut(delta, in: log).base == whole)
        let record = try RawLMDB.record(delta, in: log)
        #expect(remembered.checksum == record.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    /// The remembered version is what the next delta is made from: a version remembered with the
    /// live record's seq and checksum but other bytes (what no save can leave) shows in what the
    /// delta rebuilds, which is how this spec knows the base was not read back.
    @Test func theNextSave_makesItsDeltaFromTheRememberedVersion_withoutReadingItBack() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 32)
        var feed = FilmFeed(count: 100, using: &generator)
        try await DeltaTests.save(log, feed.payload, at: 1)
        let key = Array("films".utf8)
        var remembered = try #require(log.recentPayloads.version(of: key))
        // Two runs swapped: a delta made from these bytes copies each run from where the other
        // one is in the stored version.
        var altered = Array(remembered.payload)
        let first = Array(altered[1_000..<1_200]), second = Array(altered[20_000..<20_200])
        altered.replaceSubrange(1_000..<1_200, with: second)
        altered.replaceSubrange(20_000..<20_200, with: first)
        remembered.payload = Data(altered)
        log.recentPayloads.remember(remembered, of: key)

        feed.change(2, using: &generator)
        try await DeltaTests.save(log, feed.payload, at: 2)
        log.recentPayloads.forget(key) // what the record holds, not what the save remembered
        #expect(try log.retrieve("films")?.payload != feed.payload, "rebuilt from the remembered bytes")
    }

    /// Another writer's save (here, one that reaches the writer without this log's bookkeeping,
    /// as a save from another process would) replaces the live version: the remembered one is
    /// no longer at the live seq, so the base is read back, and the delta rebuilds exactly.
    @Test func aVersionNoLongerLive_isNotUsed_theLiveOneIsReadBack() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 33)
        var feed = FilmFeed(count: 100, using: &generator)
        try await DeltaTests.save(log, feed.payload, at: 1)
        let key = Array("films".utf8)
        let stale = try #require(log.recentPayloads.version(of: key))

        feed.change(3, using: &generator)
        let elsewhere = try log.preparation.prepare([.delete(key: "films", reason: .replaced),
                                         .put(key: "films", payload: feed.payload, timestamp: Date(timeIntervalSince1970: 2))]).events
        let live = try await log.writer.append(elsewhere).range.upperBound
        #expect(log.recentPayloads.version(of: key)?.seq == stale.seq, "nothing told this log")

        feed.change(2, using: &generator)
        let put = try await DeltaTests.save(log, feed.payload, at: 3)
        #expect(try DeltaTests.rawPut(put, in: log).base == live)
        #expect(try log.retrieve("films")?.payload == feed.payload)
        #expect(try log.verify().isClean)
    }

    @Test func rememberingPastTheLimit_forgetsTheOldestFirst_andKeepsNoVersionOverAQuarterOfIt() {
        let memory = RecentPayloads()
        let size = RecentPayloads.limit / 4
        func version(_ seq: UInt64, bytes: Int) -> RememberedPayload {
            RememberedPayload(payload: Data(count: bytes), seq: seq, checksum: 0)
        }
        for index in 0..<5 { memory.remember(version(UInt64(index + 1), bytes: size), of: [UInt8(index)]) }
        #expect(memory.version(of: [0]) == nil, "the oldest went")
        #expect((1..<5).allSatisfy { memory.version(of: [UInt8($0)]) != nil })
        memory.remember(version(9, bytes: size + 1), of: [9])
        #expect(memory.version(of: [9]) == nil)
        memory.forget([4])
        #expect(memory.version(of: [4]) == nil)
    }

    /// The oldest is the one remembered longest ago: a key remembered again is as new as its
    /// last version, and a forgotten one frees its bytes and is not counted again.
    @Test func theOldestRemembered_goesFirst_countingAKeyRememberedAgainAsNew() {
        let memory = RecentPayloads()
        let quarter = RecentPayloads.limit / 4
        func version(_ seq: UInt64) -> RememberedPayload { RememberedPayload(payload: Data(count: quarter), seq: seq, checksum: 0) }
        for (seq, key) in [(1, "a"), (2, "b"), (3, "c"), (4, "a"), (5, "d")] { memory.remember(version(UInt64(seq)), of: Array(key.utf8)) }
        memory.forget(Array("c".utf8))
        memory.remember(version(6), of: Array("e".utf8))
        memory.remember(version(7), of: Array("f".utf8))  // five quarters without c: b goes
        #expect(memory.version(of: Array("b".utf8)) == nil)
        #expect(["a", "d", "e", "f"].allSatisfy { memory.version(of: Array($0.utf8)) != nil })
        #expect(memory.version(of: Array("a".utf8))?.seq == 4)
        // Thousands of small versions past the limit keep the newest, in order.
        let small = RecentPayloads.limit / 1_000
        for index in 0..<5_000 {
            memory.remember(RememberedPayload(payload: Data(count: small), seq: UInt64(100 + index), checksum: 0), of: Array("k\(index)".utf8))
        }
        #expect(memory.version(of: Array("k4999".utf8)) != nil && memory.version(of: Array("k4000".utf8)) != nil)
        #expect(memory.version(of: Array("k3990".utf8)) == nil && memory.version(of: Array("f".utf8)) == nil)
    }

    /// A load takes the remembered bytes (here altered, as no save leaves them, to see it) when
    /// the live record is the one they were remembered from.
    @Test func aLoad_takesTheRememberedBytes_whenTheLiveRecordIsTheirs() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 34)
        var feed = FilmFeed(count: 100, using: &generator)
        try await DeltaTests.save(log, feed.payload, at: 1)
        feed.change(2, using: &generator)
        try await DeltaTests.save(log, feed.payload, at: 2)
        let key = Array("films".utf8)
        var remembered = try #require(log.recentPayloads.version(of: key))
        var altered = remembered.payload
        altered[altered.startIndex + 100] ^= 0x20
        remembered.payload = altered
        log.recentPayloads.remember(remembered, of: key)

        #expect(try log.retrieve("films")?.payload == altered)
        log.recentPayloads.forget(key)
        #expect(try log.retrieve("films")?.payload == feed.payload)
    }

    /// Damage after the save, in the live delta or in the whole put its chain starts from, is
    /// reported by a load as without the remembered bytes.
    @Test(arguments: [false, true])
    func damageToTheLiveRecordOrItsChain_isReportedByALoad_thoughItsBytesAreRemembered(inTheBase: Bool) async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 35)
        var feed = FilmFeed(count: 100, using: &generator)
        let base = try await DeltaTests.save(log, feed.payload, at: 1)
        feed.change(2, using: &generator)
        let delta = try await DeltaTests.save(log, feed.payload, at: 2)
        #expect(log.recentPayloads.version(of: Array("films".utf8))?.seq == delta)
        let damaged = inTheBase ? base : delta
        try RawLMDB.flipByte(of: damaged, in: log, offsetFromEnd: 60)

        #expect {
            try log.retrieve("films")
        } throws: { error in
            guard case CacheLogError.corruptRecord(let seq, _) = error else { return false }
            return seq == damaged
        }
    }

    // MARK: from the outside review

    /// A batch that saves a key twice, the second time back to the live version: the put live
    /// after it is the second, stored whole, and it is what is remembered (not the first put's
    /// payload under the second's seq), so the next save's delta rebuilds what was saved.
    @Test func aBatchThatSavesAKeyTwice_remembersItsLastPut_andTheNextSaveReadsBack() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 36)
        let original = FilmFeed(count: 100, using: &generator).payload
        // Edits of the same length: the remembered length cannot tell the versions apart.
        func edited(_ payload: Data, at offsets: [Int]) -> Data {
            var bytes = Array(payload)
            for offset in offsets { bytes[offset] ^= 0x01 }
            return Data(bytes)
        }
        let first = edited(original, at: [1_000, 9_000, 30_000])
        try await log.append(.put(key: "films", payload: original, timestamp: Date(timeIntervalSince1970: 1)))
        try await log.append([.put(key: "films", payload: first, timestamp: Date(timeIntervalSince1970: 2)),
                              .put(key: "films", payload: original, timestamp: Date(timeIntervalSince1970: 2))])
        #expect(try log.retrieve("films")?.payload == original)

        let next = edited(first, at: [5_000, 20_000])
        try await log.append(.put(key: "films", payload: next, timestamp: Date(timeIntervalSince1970: 3)))
        #expect(try log.retrieve("films")?.payload == next)
        log.recentPayloads.forget(Array("films".utf8)) // what the file holds
        #expect(try log.retrieve("films")?.payload == next)
        #expect(try log.verify().isClean)
    }

    /// The base of the live delta damaged after both were saved: the next save is not made a
    /// delta on a chain that cannot be rebuilt (the remembered bytes of the live delta do not
    /// vouch for its base); it is stored whole and reads back.
    /// A whole put of a 100-film feed, then a delta against it, then a byte of the whole one's
    /// payload flipped: the live delta stands on a damaged base.
    private func deltaOnADamagedBase(_ dir: TemporaryDirectory, seed: UInt64)
        async throws -> (log: EventLog, base: UInt64, delta: UInt64, feed: FilmFeed, generator: SeededGenerator) {
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: seed)
        var feed = FilmFeed(count: 100, using: &generator)
        let base = try await DeltaTests.save(log, feed.payload, at: 1)
        feed.change(2, using: &generator)
        let delta = try await DeltaTests.save(log, feed.payload, at: 2)
        try #require(try DeltaTests.rawPut(delta, in: log).base == base)
        try RawLMDB.flipByte(of: base, in: log, offsetFromEnd: 300)
        return (log, base, delta, feed, generator)
    }

    @Test func aDamagedBaseUnderTheLiveDelta_makesTheNextSaveWhole_andItReadsBack() async throws {
        let dir = try TemporaryDirectory()
        var (log, _, _, feed, generator) = try await deltaOnADamagedBase(dir, seed: 37)

        feed.change(2, using: &generator)
        let put = try await DeltaTests.save(log, feed.payload, at: 3)
        #expect(try DeltaTests.rawPut(put, in: log).flags & 0x13 == 0x01, "stored whole")
        log.recentPayloads.forget(Array("films".utf8))
        #expect(try log.retrieve("films")?.payload == feed.payload)
    }

    /// A delta whose base is damaged cannot be read back, and the damage named is the base's: a
    /// replay with payloads says the delta is built on the damaged seq, as a load does.
    @Test func aReplayWithPayloads_ofADeltaOnADamagedBase_namesTheBaseAsTheDamagedRecord() async throws {
        let dir = try TemporaryDirectory()
        let (log, base, delta, _, _) = try await deltaOnADamagedBase(dir, seed: 39)
        log.recentPayloads.forget(Array("films".utf8))

        let items = try log.events(EventQuery(from: .seq(delta), to: .seq(delta), includePayload: true))
        guard case .corrupt(let seq, let detail)? = items.first else {
            Issue.record("the delta read back: \(items)")
            return
        }
        #expect(seq == delta)
        #expect(detail.hasPrefix("built on seq \(base), which is corrupt: "), "\(detail)")
        #expect {
            _ = try log.retrieve("films")
        } throws: { error in
            guard case CacheLogError.corruptRecord(let damaged, _) = error else { return false }
            return damaged == base
        }
    }

    /// A save of the payload the key already holds is stored as a reference to that version:
    /// what is remembered of the key stays, and the next save makes its delta without reading.
    @Test func aSaveOfTheLivePayload_storedAsAReference_keepsTheRememberedVersion() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 38)
        var feed = FilmFeed(count: 100, using: &generator)
        let first = try await DeltaTests.save(log, feed.payload, at: 1)
        let again = try await DeltaTests.save(log, feed.payload, at: 2)
        #expect(try DeltaTests.rawPut(again, in: log).flags & 0x02 == 0x02, "a reference")
        #expect(log.recentPayloads.version(of: Array("films".utf8))?.seq == first)

        feed.change(2, using: &generator)
        let put = try await DeltaTests.save(log, feed.payload, at: 3)
        #expect(try DeltaTests.rawPut(put, in: log).base == first)
        log.recentPayloads.forget(Array("films".utf8))
        #expect(try log.retrieve("films")?.payload == feed.payload)
    }
}
