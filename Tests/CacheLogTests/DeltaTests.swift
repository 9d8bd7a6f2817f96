import CLMDB
import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

/// Issue 29, item 4: a refresh costs what changed. A save whose payload mostly equals its key's
/// live version stores a delta against it (flag bit 4), every retained version
/// still reads back exactly, through a chain of at most ``EventCodec/maxDeltaDepth`` deltas.
@Suite("Delta puts")
struct DeltaTests {
    /// Saves `payload` as the feed cache does (delete + put, one batch); returns the put's seq.
    @discardableResult
    static func save(_ log: EventLog, _ payload: Data, at seconds: TimeInterval, key: String = "films") async throws -> UInt64 {
        try await log.append([.delete(key: key, reason: .replaced),
                              .put(key: key, payload: payload, timestamp: Date(timeIntervalSince1970: seconds), maxAge: 604_800,
                                   metadata: ["contract": "films"])]).upperBound
    }

    /// The stored fields of record `seq` that say how its payload is held, read from the raw
    /// bytes (not through the engine): its format version, flags and, for a delta, its base and depth.
    struct RawPut {
        var version: UInt8
        var flags: UInt8
        var base: UInt64?
        var depth: Int?
    }

    static func rawPut(_ seq: UInt64, in log: EventLog) throws -> RawPut {
        let record = try RawLMDB.record(seq, in: log)
        let keyLength = Int(record[28]) << 8 | Int(record[29])
        let body = 38 + keyLength
        guard record[2] & 0x10 != 0 else { return RawPut(version: record[0], flags: record[2]) }
        let base = record[body..<(body + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return RawPut(version: record[0], flags: record[2], base: base, depth: Int(record[body + 8]))
    }

    /// The records a read of put `seq`'s payload goes through: the put, then each delta's base
    /// down to the whole put that starts the chain.
    static func chain(_ seq: UInt64, in log: EventLog) throws -> [UInt64] {
        var chain = [seq]
        while let base = try rawPut(chain[chain.count - 1], in: log).base {
            chain.append(base)
            try #require(chain.count <= 300, "a chain that does not end")
        }
        return chain
    }

    /// `record` with a new body, its lengths and checksum made right again, so that the checks
    /// behind the checksum are reached.
    static func reframed(_ record: [UInt8], body: [UInt8]) -> [UInt8] {
        let keyLength = Int(record[28]) << 8 | Int(record[29])
        let oldBodyLength = Int(record[34]) << 24 | Int(record[35]) << 16 | Int(record[36]) << 8 | Int(record[37])
        let start = 38 + keyLength
        var bytes = Array(record[0..<start]) + body + Array(record[(start + oldBodyLength)..<(record.count - 4)])
        withUnsafeBytes(of: UInt32(body.count).bigEndian) { bytes.replaceSubrange(34..<38, with: $0) }
        return resigned(bytes + [0, 0, 0, 0])
    }

    /// `record` with its checksum made right for its bytes.
    static func resigned(_ record: [UInt8]) -> [UInt8] {
        var bytes = Array(record.dropLast(4))
        let crc = bytes.withUnsafeBytes { Zlib.crc32($0) }
        withUnsafeBytes(of: crc.bigEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    static func body(of record: [UInt8]) -> [UInt8] {
        let keyLength = Int(record[28]) << 8 | Int(record[29])
        let bodyLength = Int(record[34]) << 24 | Int(record[35]) << 16 | Int(record[36]) << 8 | Int(record[37])
        return Array(record[(38 + keyLength)..<(38 + keyLength + bodyLength)])
    }

    // MARK: reading back

    @Test func everyVersion_readsBackAsSaved_across200RefreshesWithRandomSmallChanges() async throws {
        let dir = try TemporaryDirectory()
        var generator = SeededGenerator(seed: 29)
        var feed = FilmFeed(count: 100, using: &generator)
        var saved: [UInt64: Data] = [:]
        var wholeCopies = 0
        do {
            let log = try makeLog(dir)
            for refresh in 0..<200 {
                switch Int.random(in: 0..<20, using: &generator) {
                case 0: break // unchanged: a reference
                case 1: feed.films.append(FilmFeed.film(&generator))
                case 2: feed.films.remove(at: Int.random(in: 0..<feed.films.count, using: &generator))
                case 3: feed.change(30, using: &generator)
                default: feed.change(Int.random(in: 1...3, using: &generator), using: &generator)
                }
                let payload = feed.payload
                saved[try await Self.save(log, payload, at: TimeInterval(refresh))] = payload
                wholeCopies += try payload.withUnsafeBytes { try Zlib.compress($0) }.count
            }
        }
        try await waitUntilClosed(dir.path("db"))

        // From the file, by a new instance: every version, one key's history, the live one.
        let log = try makeLog(dir)
        let puts = try events(log, EventQuery(kinds: [.put], includePayload: true))
        #expect(puts.count == 200)
        for put in puts { #expect(put.payload == saved[put.seq], "seq \(put.seq)") }
        let history = try events(log, EventQuery(key: "films", kinds: [.put], reverse: true, includePayload: true))
        #expect(history.map(\.payload) == puts.reversed().map(\.payload))
        #expect(try log.retrieve("films")?.payload == feed.payload)
        #expect(try log.verify().isClean)

        // Most refreshes changed a few films: most puts are deltas, and they cost a fraction.
        let deltas = puts.filter { $0.isDelta }
        #expect(deltas.count >= 120, "\(deltas.count) deltas")
        let stored = puts.reduce(0) { $0 + $1.storedBytes }
        #expect(stored * 4 < wholeCopies, "\(stored) bytes stored, \(wholeCopies) as whole copies")
    }

    @Test func aDeltaChain_isAtMostMaxDepthDeep_thenAWholeCopyStartsTheNext() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 4)
        var feed = FilmFeed(count: 100, using: &generator)
        var puts: [UInt64] = []
        for refresh in 0..<(3 * (EventCodec.maxDeltaDepth + 1) + 2) {
            feed.change(2, using: &generator)
            puts.append(try await Self.save(log, feed.payload, at: TimeInterval(refresh)))
        }
        var depths: [Int] = []
        for seq in puts {
            let chain = try Self.chain(seq, in: log)
            // A read of any version touches at most maxDeltaDepth + 1 records.
            #expect(chain.count <= EventCodec.maxDeltaDepth + 1, "seq \(seq): \(chain)")
            #expect(try Self.rawPut(seq, in: log).depth ?? 0 == chain.count - 1)
            depths.append(chain.count - 1)
        }
        // Each refresh deltas on the one before until the bound; then a whole copy, and again.
        let cycle = Array(0...EventCodec.maxDeltaDepth)
        #expect(depths == Array((cycle + cycle + cycle + [0, 1]).prefix(puts.count)))
        for (seq, depth) in zip(puts, depths) where depth > 0 {
            #expect(try Self.rawPut(seq, in: log).version == 3)
            #expect(try Self.rawPut(seq, in: log).base == seq - 2, "the base is the version it replaced")
        }
    }

    @Test func aChangedPayloadUnlikeItsPredecessor_isStoredWhole_andAnUnchangedOneAsAReference() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 5)
        var feed = FilmFeed(count: 100, using: &generator)
        try await Self.save(log, feed.payload, at: 1)
        feed.change(1, using: &generator)
        let delta = try await Self.save(log, feed.payload, at: 2)
        let reference = try await Self.save(log, feed.payload, at: 3)
        let other = FilmFeed(count: 100, using: &generator).payload
        let whole = try await Self.save(log, other, at: 4)
        #expect(try Self.rawPut(delta, in: log).version == 3)
        // The unchanged refresh refers to the delta put that holds its bytes.
        #expect(try Self.rawPut(reference, in: log).flags & 0x13 == 0x02)
        #expect(try Self.body(of: RawLMDB.record(reference, in: log)) == RawLMDB.seqKey(delta))
        #expect(try Self.rawPut(whole, in: log).flags & 0x13 == 0x01)
        let puts = try events(log, EventQuery(kinds: [.put], includePayload: true))
        #expect(puts.dropFirst().map(\.payload) == [feed.payload, feed.payload, other])
        #expect(puts[2].storedBytes < 100)
        #expect(try log.retrieve("films")?.payload == other)
        #expect(try log.verify().isClean)
    }

    /// Issue 29's targets: a year of two-hourly refreshes of a 100-film feed, 2 films changing
    /// each time, under a recorded 30-day window that the writer applies as it goes, keeps
    /// data.mdb within 10 MB all year (sampled after every save) and ends within 2.5 MB (whole
    /// copies end at about 8 MB; `Tools/bench --only year` measures both).
    @Test func aYearOfTwoHourlyRefreshes_2Of100FilmsChanging_endsWithin2_5MB_underA30DayWindow() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try EventLog(path: dir.path("db"), options: .init(
            durability: .unsynced, clock: clock.function,
            initialRetention: (RetentionPolicy(history: 30 * 86_400, sizeLimit: nil), "DeltaTests")))
        var generator = SeededGenerator(seed: 42)
        var feed = FilmFeed(count: 100, using: &generator)
        var putBytes = 0
        var largest = 0
        let refreshes = 365 * 12
        for refresh in 0..<refreshes {
            if refresh > 0 { clock.advance(7_200) }
            feed.change(2, using: &generator)
            let put = try await Self.save(log, feed.payload, at: clock.date.timeIntervalSince1970)
            putBytes += try events(log, EventQuery(from: .seq(put), to: .seq(put))).first?.storedBytes ?? 0
            largest = max(largest, try Self.dataFileSize(dir))
        }
        clock.advance(3_600)
        try await log.applyRetention()
        try log.sync()
        let file = try Self.dataFileSize(dir)
        #expect(max(largest, file) <= 10_000_000, "data.mdb reached \(largest) bytes")
        #expect(file <= 2_500_000, "data.mdb is \(file) bytes")
        // A whole copy is about 14.4 KB: the puts cost what changed, and a share of a whole
        // copy every maxDeltaDepth + 1 refreshes.
        #expect(putBytes / refreshes < 3 * 1024, "\(putBytes / refreshes) bytes of put per refresh")
        #expect(try log.retrieve("films")?.payload == feed.payload)
        #expect(try log.verify().isClean)
    }

    static func dataFileSize(_ dir: TemporaryDirectory) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: dir.path("db") + "/data.mdb")[.size] as? Int)
    }

    // MARK: compaction

    @Test func compaction_keepsEveryBaseALiveDeltaNeeds_andRemovesAChainNothingNeeds() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 6)
        var feed = FilmFeed(count: 100, using: &generator)
        var versions: [UInt64: Data] = [:]
        for refresh in 0..<5 {
            feed.change(2, using: &generator)
            versions[try await Self.save(log, feed.payload, at: TimeInterval(refresh))] = feed.payload
        }
        let live = try #require(versions.keys.max())
        #expect(try Self.chain(live, in: log) == [10, 8, 6, 4, 2])
        try await log.append(.put(key: "genres", payload: payload("[]"), timestamp: Date(timeIntervalSince1970: 9)))

        // The cut is after every films record: the live delta keeps its whole chain.
        let report = try await log.compact(before: .seq(try log.lastSeq()))
        #expect(try events(log).map(\.seq) == [2, 4, 6, 8, 10, 11])
        #expect(report.removed == 5)
        #expect(try log.retrieve("films")?.payload == feed.payload)
        #expect(try log.verify().isClean)

        // A whole copy replaces the chain: nothing needs it any more, and the next compaction
        // removes it with its entries in the refs table.
        let other = FilmFeed(count: 100, using: &generator).payload
        let whole = try await Self.save(log, other, at: 20)
        #expect(try Self.chain(whole, in: log) == [whole])
        #expect(try !RawLMDB.dump(log, \.refs).isEmpty)
        let second = try await log.compact(before: .seq(whole))
        #expect(try events(log).map(\.seq) == [11, whole])
        #expect(second.removed == 6)
        #expect(try RawLMDB.dump(log, \.refs).isEmpty)
        #expect(try log.retrieve("films")?.payload == other)
        #expect(try log.verify().isClean)
    }

    @Test func compaction_keepsTheChainOfAPutAfterTheCut_throughTheRefsTable() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 7)
        var feed = FilmFeed(count: 100, using: &generator)
        var versions: [UInt64: Data] = [:]
        for refresh in 0..<4 {
            feed.change(2, using: &generator)
            versions[try await Self.save(log, feed.payload, at: TimeInterval(refresh))] = feed.payload
        }
        // Seq 8 (a delta on 6, on 4, on 2) lies after the cut; nothing before the cut is live.
        try await log.compact(before: .seq(7))
        #expect(try events(log).map(\.seq) == [2, 4, 6, 7, 8])
        for put in try events(log, EventQuery(kinds: [.put], includePayload: true)) {
            #expect(put.payload == versions[put.seq], "seq \(put.seq)")
        }
        #expect(try log.verify().isClean)
    }

    // MARK: the writer checks the base

    /// Two appends interleave: one prepares a delta against the live version, then, before it
    /// reaches the writer, another save replaces that version with a whole copy and a compaction
    /// removes it. The delta no longer has a base: the put is stored whole.
    @Test func aDeltaWhoseBaseWasRemovedBetweenPrepareAndCommit_isStoredWhole() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 8)
        var feed = FilmFeed(count: 100, using: &generator)
        let base = try await Self.save(log, feed.payload, at: 1)
        feed.change(2, using: &generator)
        let prepared = try log.preparation.prepare([.delete(key: "films", reason: .replaced),
                                        .put(key: "films", payload: feed.payload, timestamp: Date(timeIntervalSince1970: 3))]).events
        #expect(prepared[1].delta?.base == base)

        let other = FilmFeed(count: 100, using: &generator).payload
        let replacing = try await Self.save(log, other, at: 2)
        try await log.compact(before: .seq(replacing))
        #expect(try RawLMDB.dump(log, \.events)[RawLMDB.seqKey(base)] == nil, "the base is gone")

        let put = try await log.writer.append(prepared).range.upperBound
        #expect(try Self.rawPut(put, in: log).flags & 0x13 == 0x01, "stored whole")
        #expect(try log.retrieve("films")?.payload == feed.payload)
        #expect(try log.verify().isClean)
    }

    /// The same interleaving without the compaction: the base is no longer live, but it is still
    /// the record the delta was made from, so the delta stands.
    @Test func aDeltaWhoseBaseIsNoLongerLive_butStillStored_isStoredAsADelta() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 9)
        var feed = FilmFeed(count: 100, using: &generator)
        let base = try await Self.save(log, feed.payload, at: 1)
        feed.change(2, using: &generator)
        let prepared = try log.preparation.prepare([.delete(key: "films", reason: .replaced),
                                        .put(key: "films", payload: feed.payload, timestamp: Date(timeIntervalSince1970: 3))]).events
        try await Self.save(log, FilmFeed(count: 100, using: &generator).payload, at: 2)

        let put = try await log.writer.append(prepared).range.upperBound
        #expect(try Self.rawPut(put, in: log).base == base)
        #expect(try log.retrieve("films")?.payload == feed.payload)
        #expect(try RawLMDB.dump(log, \.refs)[RawLMDB.seqKey(base)] == RawLMDB.seqKey(put))
        #expect(try log.verify().isClean)
    }

    /// A base damaged after the delta was made (its bytes no longer pass their checksum) is not
    /// built on: the put is stored whole, and stays readable whatever becomes of the base.
    @Test func aDeltaWhoseBaseWasDamagedMeanwhile_isStoredWhole() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 10)
        var feed = FilmFeed(count: 100, using: &generator)
        let base = try await Self.save(log, feed.payload, at: 1)
        feed.change(2, using: &generator)
        let prepared = try log.preparation.prepare([.delete(key: "films", reason: .replaced),
                                        .put(key: "films", payload: feed.payload, timestamp: Date(timeIntervalSince1970: 3))]).events
        #expect(prepared[1].delta?.base == base)
        try RawLMDB.flipByte(of: base, in: log, offsetFromEnd: 300)

        let put = try await log.writer.append(prepared).range.upperBound
        #expect(try Self.rawPut(put, in: log).flags & 0x13 == 0x01)
        #expect(try log.retrieve("films")?.payload == feed.payload)
    }

    // MARK: damage

    enum Damage: String, CaseIterable, Sendable {
        case flippedByte, truncatedStream, missingBase, baseIsADelete, wrongDepth, wrongInstructionLength,
             copyOutOfRange, tooFewBytes, tooManyBytes, truncatedVarint, unknownInstruction, versionOneWithDeltaFlag, versionFour
    }

    /// Delta instructions compressed as a delta body holds them, at `depth` on `base`.
    static func deltaBody(base: UInt64, depth: UInt8, instructions: [UInt8]) throws -> [UInt8] {
        var body = RawLMDB.seqKey(base) + [depth]
        withUnsafeBytes(of: UInt32(instructions.count).bigEndian) { body.append(contentsOf: $0) }
        return body + (try instructions.withUnsafeBytes { try Zlib.compress($0) })
    }

    @Test(arguments: Damage.allCases)
    func aDamagedDeltaPut_isACorruptRecordAtItsSeq_neverAPayload(_ damage: Damage) async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 11)
        var feed = FilmFeed(count: 100, using: &generator)
        let base = try await Self.save(log, feed.payload, at: 1)
        let length = feed.payload.count
        feed.change(2, using: &generator)
        let put = try await Self.save(log, feed.payload, at: 2)
        let record = try RawLMDB.record(put, in: log)
        #expect(record[0] == 3 && record[2] & 0x10 != 0)
        let body = Self.body(of: record)
        let instructionLength = body[9..<13].reduce(0) { $0 << 8 | Int($1) }
        let expected: String
        var damaged: [UInt8]
        switch damage {
        case .flippedByte:
            damaged = record
            damaged[damaged.count - 8] ^= 0x40
            expected = "checksum mismatch"
        case .truncatedStream:
            damaged = Self.reframed(record, body: Array(body.dropLast(3)))
            expected = "delta instructions do not inflate to \(instructionLength) bytes"
        case .missingBase:
            // Seq 1 (the first save's delete) is gone, as if compaction had removed it.
            try RawLMDB.write(log) { txn, tables in RawLMDB.delete(txn, tables.events, RawLMDB.seqKey(1)) }
            damaged = Self.reframed(record, body: RawLMDB.seqKey(1) + body.dropFirst(8))
            expected = "its delta base at seq 1 is missing"
        case .baseIsADelete:
            damaged = Self.reframed(record, body: RawLMDB.seqKey(base - 1) + body.dropFirst(8))
            expected = "its delta base at seq \(base - 1) does not match that record"
        case .wrongDepth:
            var changed = body
            changed[8] = 2
            damaged = Self.reframed(record, body: changed)
            expected = "its delta base at seq \(base) does not match that record"
        case .wrongInstructionLength:
            var changed = body
            changed[12] ^= 1
            damaged = Self.reframed(record, body: changed)
            expected = "delta instructions do not inflate to \(instructionLength ^ 1) bytes"
        case .copyOutOfRange:
            // One byte at offset 100,000 (varint A0 8D 06) of a base of about 45,000.
            damaged = Self.reframed(record, body: try Self.deltaBody(base: base, depth: 1, instructions: [1, 0xA0, 0x8D, 0x06, 1]))
            expected = "delta copy of 1 bytes at 100000 is outside the base's \(length) bytes"
        case .tooFewBytes:
            damaged = Self.reframed(record, body: try Self.deltaBody(base: base, depth: 1, instructions: [1, 0, 100]))
            expected = "delta makes 100 bytes, payload length says \(feed.payload.count)"
        case .tooManyBytes:
            damaged = Self.reframed(record, body: try Self.deltaBody(base: base, depth: 1, instructions: [2, 3, 65, 66, 67] + Array(repeating: [1, 0, 0xE8, 0x07], count: 100).flatMap { $0 }))
            expected = "delta makes more than the payload length \(feed.payload.count)"
        case .truncatedVarint:
            damaged = Self.reframed(record, body: try Self.deltaBody(base: base, depth: 1, instructions: [1, 0x80, 0x80]))
            expected = "delta instructions end inside a copy offset"
        case .unknownInstruction:
            damaged = Self.reframed(record, body: try Self.deltaBody(base: base, depth: 1, instructions: [7, 1, 1]))
            expected = "unknown delta instruction 7"
        case .versionOneWithDeltaFlag:
            damaged = record
            damaged[0] = 1
            damaged = Self.resigned(damaged)
            expected = "record format version 1 for a record that needs version 2"
        case .versionFour:
            damaged = record
            damaged[0] = 4
            damaged = Self.resigned(damaged)
            expected = "unsupported record format version 4; this build of CacheLog reads versions 1 to 3"
        }
        try RawLMDB.replace(put, with: damaged, in: log)

        #expect(throws: CacheLogError.corruptRecord(seq: put, detail: expected)) { _ = try log.retrieve("films") }
        let items = try log.events(EventQuery(key: "films", includePayload: true))
        #expect(items.contains { if case .corrupt(let seq, let detail) = $0 { seq == put && detail == expected } else { false } })
        // A base missing after the compaction base is a gap in the log, named as one.
        let problems = try log.verify().problems
        let named = damage == .missingBase ? (seq: UInt64(1), message: "record missing") : (seq: put, message: "corrupt record: \(expected)")
        #expect(problems.contains { $0.seq == named.seq && $0.message == named.message }, "\(problems)")
        // The version before it reads as saved.
        #expect(try events(log, EventQuery(from: .seq(base), to: .seq(base), includePayload: true)).first?.payload?.count == length)
    }

    /// Mutations of a delta put's bytes, signed with a right checksum half the time, never trap
    /// and never read back as a payload of another length: each is a payload of the recorded
    /// length or a typed error, for retrieve, replay and verify.
    @Test func randomlyMutatedDeltaPuts_areTypedErrors_orPayloadsOfTheRecordedLength() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 12)
        var feed = FilmFeed(count: 40, using: &generator)
        try await Self.save(log, feed.payload, at: 1)
        feed.change(2, using: &generator)
        let put = try await Self.save(log, feed.payload, at: 2)
        let record = try RawLMDB.record(put, in: log)
        try #require(record[0] == 3 && record[2] & 0x10 != 0, "a delta put")
        for round in 0..<300 {
            var bytes = record
            let body = Self.body(of: record)
            switch round % 3 {
            case 0:
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
                }
            case 1:
                var changed = body
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    changed[Int.random(in: 0..<changed.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
                bytes = Self.reframed(record, body: changed)
            default:
                let instructions = generator.bytes(Int.random(in: 0...40, using: &generator))
                bytes = Self.reframed(record, body: try Self.deltaBody(base: put - 2, depth: 1, instructions: instructions))
            }
            if Bool.random(using: &generator) { bytes = Self.resigned(bytes) }
            try RawLMDB.replace(put, with: bytes, in: log)
            // A damaged key signed with a right checksum is another key's put: the state row
            // then names no put of films, which is an error of its own (corruptStateRow).
            do {
                if let value = try log.retrieve("films") { #expect(value.payload.count == feed.payload.count, "round \(round)") }
            } catch is CacheLogError {}
            _ = try log.verify()
            _ = try log.events(EventQuery(includePayload: true))
        }
    }

    // MARK: the refs table

    @Test func aRefsTableThatDisagreesWithTheRecords_isNamedByVerify_andRepairedByRebuild() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 13)
        var feed = FilmFeed(count: 100, using: &generator)
        for refresh in 0..<3 {
            feed.change(2, using: &generator)
            try await Self.save(log, feed.payload, at: TimeInterval(refresh))
        }
        try await Self.save(log, feed.payload, at: 3) // seq 8: a reference to 6
        // Deltas 4 → 2 and 6 → 4, the reference 8 → 6.
        let listed = try RawLMDB.dump(log, \.refs)
        #expect(listed == [RawLMDB.seqKey(2): RawLMDB.seqKey(4), RawLMDB.seqKey(4): RawLMDB.seqKey(6), RawLMDB.seqKey(6): RawLMDB.seqKey(8)])
        #expect(try log.verify().isClean)

        // 6 → 4 drops out; 8 is listed under 2 as well, and a seq the log never held under 6.
        try RawLMDB.write(log) { txn, tables in
            try RawLMDB.deleteDuplicate(txn, tables.refs, RawLMDB.seqKey(4), RawLMDB.seqKey(6))
            #expect(RawLMDB.put(txn, tables.refs, RawLMDB.seqKey(2), RawLMDB.seqKey(8)) == MDB_SUCCESS)
            #expect(RawLMDB.put(txn, tables.refs, RawLMDB.seqKey(6), RawLMDB.seqKey(500)) == MDB_SUCCESS)
        }
        let problems = try log.verify().problems
        #expect(problems.map(\.description) == [
            "seq 6: the refs table does not list this record under seq 4, whose payload it needs",
            "seq 8: the refs table lists this record as needing the payload of seq 2, which it does not (and 1 more entries)",
        ])
        #expect(problems.allSatisfy { $0.fixedByRebuild })

        let report = try await log.rebuildState()
        #expect(report.refsEntriesRepaired == 3)
        #expect(try RawLMDB.dump(log, \.refs) == listed)
        #expect(try log.verify().isClean)
        #expect(try await log.rebuildState().refsEntriesRepaired == 0)
    }

    /// What retention asks of the engine: whether a record is still the source of a stored one,
    /// and to remove a record with its entries, refused while a stored record needs it.
    @Test func removeRecord_refusesASourceStillNeeded_andRemovesChainsNewestFirst() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 14)
        var feed = FilmFeed(count: 100, using: &generator)
        for refresh in 0..<3 {
            feed.change(2, using: &generator)
            try await Self.save(log, feed.payload, at: TimeInterval(refresh))
        }
        let other = FilmFeed(count: 100, using: &generator).payload
        let live = try await Self.save(log, other, at: 9)
        // The chain 6 → 4 → 2 is no longer live: removed record by record, as retention does.
        let tables = log.tables
        let results: [Int?] = try await log.writer.exclusive {
            try log.environment.write { txn in
                #expect(try tables.refs.isPayloadSource(txn, 2))
                #expect(try tables.refs.isPayloadSource(txn, 4))
                #expect(try !tables.refs.isPayloadSource(txn, 6))
                return [try tables.removeRecord(txn, 2), try tables.removeRecord(txn, 6), try tables.removeRecord(txn, 4), try tables.removeRecord(txn, 2)]
            }
        }
        #expect(results[0] == nil, "2 is the base of 4")
        #expect(results[1].map { $0 > 100 } == true)
        #expect(results[2].map { $0 > 100 } == true)
        #expect(results[3].map { $0 > 1_000 } == true)
        #expect(try events(log).map(\.seq) == [1, 3, 5, live - 1, live])
        #expect(try RawLMDB.dump(log, \.refs).isEmpty)
        #expect(try KeyIndexTests.rawEntries(log) == (try KeyIndexTests.recordsAsEntries(log)))
        #expect(try log.retrieve("films")?.payload == other)
    }

    // MARK: the format before deltas

    static let formatTwoFixture = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CLITests/Fixtures/format-2/data.mdb")

    /// Every put's payload decoded from the raw records with zlib alone (a reference followed
    /// to its target), not through the engine's read path.
    static func rawPayloads(_ log: EventLog) throws -> [UInt64: Data] {
        let records = try RawLMDB.dump(log, \.events)
        var payloads: [UInt64: Data] = [:]
        for (key, record) in records where record[1] == 1 {
            let seq = key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            var holder = record
            if record[2] & 2 != 0 { holder = try #require(records[body(of: record)]) }
            let length = Int(holder[30]) << 24 | Int(holder[31]) << 16 | Int(holder[32]) << 8 | Int(holder[33])
            let inflated: Data? = body(of: holder).withUnsafeBytes { Zlib.decompress($0, expectedSize: length) }
            let payload = try #require(inflated)
            payloads[seq] = payload
        }
        return payloads
    }

    @Test func aFormat2Database_readsUnchanged_andGetsItsRefsTableOnItsFirstOpenForWriting() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.formatTwoFixture.path, toPath: path + "/data.mdb")
        let format = { (version: UInt32) in withUnsafeBytes(of: version.bigEndian) { Array($0) } }

        var expected: [UInt64: Data] = [:]
        do {
            let readOnly = try makeLog(dir, readOnly: true)
            #expect(readOnly.environment.tables.stampedFormat == 2)
            #expect(readOnly.tables.schema.refs == nil)
            expected = try Self.rawPayloads(readOnly)
            #expect(expected.count == 5)
            let puts = try events(readOnly, EventQuery(kinds: [.put], includePayload: true))
            #expect(Dictionary(uniqueKeysWithValues: puts.map { ($0.seq, $0.payload ?? Data()) }) == expected)
            #expect(try readOnly.verify().isClean)
        }
        try await waitUntilClosed(path)

        let log = try makeLog(dir)
        #expect(try RawLMDB.dump(log, \.meta)[MetaKey.format] == format(Environment.formatVersion))
        // The 304 refresh at seq 7 refers to seq 6's bytes.
        #expect(try RawLMDB.dump(log, \.refs) == [RawLMDB.seqKey(6): RawLMDB.seqKey(7)])
        let puts = try events(log, EventQuery(kinds: [.put], includePayload: true))
        #expect(Dictionary(uniqueKeysWithValues: puts.map { ($0.seq, $0.payload ?? Data()) }) == expected)
        #expect(try log.verify().isClean)

        // A refresh that changed a film is a delta against the whole put format 2 wrote.
        let live = try #require(try log.retrieve("films"))
        let changed = Data(String(decoding: live.payload, as: UTF8.self).replacingOccurrences(of: "A New Title", with: "Another Title").utf8)
        #expect(changed != live.payload)
        let put = try await Self.save(log, changed, at: 1_796_500_000)
        #expect(try Self.rawPut(put, in: log).base == live.seq)
        #expect(try log.retrieve("films")?.payload == changed)
        #expect(try log.verify().isClean)
    }
}
