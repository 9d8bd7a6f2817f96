import CZlib
import CacheLog
import FeedAPI
import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

/// Issue 6, item 7 (decoder part): random and mutated records and random response bodies never
/// crash or hang a decoder, and every failure is a typed error. Seeded, so every run is the same.
@Suite("Hostile input")
struct HostileInputTests {
    // MARK: records, straight into the codec

    /// A valid stored record of a random event.
    static func randomRecord(_ generator: inout SeededGenerator) throws -> (Event, [UInt8]) {
        let key = String(decoding: generator.bytes(Int.random(in: 1...24, using: &generator)).map { 0x61 + $0 % 26 }, as: UTF8.self)
        let timestamp = Date(timeIntervalSince1970: Double(Int.random(in: 0...2_000_000_000, using: &generator)))
        let event: Event = switch Int.random(in: 0..<3, using: &generator) {
        case 0:
            .put(
                key: key, payload: Data(generator.bytes(Int.random(in: 0...300, using: &generator))), timestamp: timestamp,
                maxAge: Bool.random(using: &generator) ? Double(Int.random(in: 0...5_000_000, using: &generator)) : nil,
                metadata: Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0...3, using: &generator)).map { index in
                    ("name\(index)", String(decoding: generator.bytes(Int.random(in: 0...40, using: &generator)).map { 0x20 + $0 % 90 }, as: UTF8.self))
                }))
        case 1: .delete(key: key, reason: Event.DeletionReason.allCases.randomElement(using: &generator)!)
        default: .expire(key: key, timestamp: timestamp, maxAge: 604_800)
        }
        let prepared = try EventCodec.prepare(event, maxKeySize: 511)
        return (event, EventCodec.encode(prepared, recordedAt: 1_800_000_000))
    }

    /// Changes `record` the way a bad disk, a bad copy or an attacker would.
    static func mutate(_ record: [UInt8], _ generator: inout SeededGenerator) -> [UInt8] {
        var bytes = record
        switch Int.random(in: 0..<7, using: &generator) {
        case 0: // flip a few bytes anywhere
            for _ in 0..<Int.random(in: 1...4, using: &generator) where !bytes.isEmpty {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
            }
        case 1: // truncate
            bytes.removeLast(Int.random(in: 0...bytes.count, using: &generator))
        case 2: // extend
            bytes += generator.bytes(Int.random(in: 1...64, using: &generator))
        case 3: // a random header field, in place: version, kind, flags, reason or a length
            let offset = [0, 1, 2, 3, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37].randomElement(using: &generator)!
            if offset < bytes.count { bytes[offset] = UInt8.random(in: 0...255, using: &generator) }
        case 4: // the payload length claims the maximum
            if bytes.count > 34 { bytes.replaceSubrange(30..<34, with: [0xFF, 0xFF, 0xFF, 0xFF]) }
        case 5: // garbage body
            if bytes.count > 42 {
                for index in 38..<(bytes.count - 4) { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
            }
        default: // random bytes of a plausible size
            bytes = generator.bytes(Int.random(in: 0...400, using: &generator))
        }
        // Half the time, sign the damage with a correct checksum, so the checks behind it are reached too.
        if Bool.random(using: &generator), bytes.count >= EventCodec.checksumSize {
            let crc = bytes.withUnsafeBytes { Zlib.crc32(UnsafeRawBufferPointer(rebasing: $0[0..<(bytes.count - 4)])) }
            withUnsafeBytes(of: crc.bigEndian) { bytes.replaceSubrange((bytes.count - 4)..., with: $0) }
        }
        return bytes
    }

    /// Decodes `record` as the engine does; returns the decoded key and payload, or the typed error.
    static func decode(_ record: [UInt8], seq: UInt64) -> Result<(String, Data?, RecordedEvent), CacheLogError> {
        record.withUnsafeBytes { raw in
            do {
                let header = try EventCodec.decodeHeader(raw, seq: seq)
                let key = EventCodec.key(header, in: raw)
                let payload = header.kind == .put ? try EventCodec.payload(header, in: raw, seq: seq) : nil
                let event = try EventCodec.recordedEvent(header, in: raw, seq: seq, payload: nil)
                return .success((key, payload, event))
            } catch let error as CacheLogError {
                return .failure(error)
            } catch {
                Issue.record("untyped error \(error)")
                return .failure(.corruptRecord(seq: seq, detail: "untyped"))
            }
        }
    }

    @Test(.hangGuard)
    func hostileRecords_randomAndMutated_neverCrashTheDecoder_andFailOnlyAsCorruptRecordOfTheirSeq() throws {
        var generator = SeededGenerator(seed: 0xBAD_C0DE)
        let start = ContinuousClock.now
        var rejected = 0
        for iteration in 0..<4000 {
            let seq = UInt64(iteration + 1)
            let (event, record) = try Self.randomRecord(&generator)
            // The untouched record decodes to what was encoded.
            if case .success(let decoded) = Self.decode(record, seq: seq) {
                #expect(decoded.0 == event.key)
                if case .put(_, let payload, _, let maxAge, let metadata) = event {
                    #expect(decoded.1 == payload)
                    #expect(decoded.2.maxAge == maxAge && decoded.2.metadata == metadata)
                }
            } else {
                Issue.record("a valid record failed to decode: \(event)")
            }

            // One changed byte is always caught (CRC-32 catches every burst of up to 32 bits).
            var flipped = record
            flipped[Int.random(in: 0..<flipped.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
            if case .success = Self.decode(flipped, seq: seq) { Issue.record("a flipped byte went unnoticed in \(event)") }

            let mutated = Self.mutate(record, &generator)
            switch Self.decode(mutated, seq: seq) {
            case .success: break // a mutation may keep a valid record (or sign a new one): fine, it is data
            case .failure(let error):
                rejected += 1
                guard case .corruptRecord(let at, _) = error else {
                    Issue.record("not a corruptRecord: \(error)")
                    continue
                }
                #expect(at == seq)
            }
        }
        #expect(rejected > 2000)
        #expect(ContinuousClock.now - start < .seconds(30), "no input may make decoding slow")
    }

    @Test func hostileRecord_claimingAFourGigabytePayload_isRejectedQuickly() throws {
        // A put whose header claims u32.max payload bytes behind a 10-byte body, correctly checksummed.
        var generator = SeededGenerator(seed: 4)
        let prepared = try EventCodec.prepare(.put(key: "k", payload: Data(generator.bytes(2)), timestamp: Date()), maxKeySize: 511)
        var record = EventCodec.encode(prepared, recordedAt: 0)
        record.replaceSubrange(30..<34, with: [0xFF, 0xFF, 0xFF, 0xFF])
        let crc = record.withUnsafeBytes { Zlib.crc32(UnsafeRawBufferPointer(rebasing: $0[0..<(record.count - 4)])) }
        withUnsafeBytes(of: crc.bigEndian) { record.replaceSubrange((record.count - 4)..., with: $0) }
        let start = ContinuousClock.now
        guard case .failure(.corruptRecord(seq: 9, _)) = Self.decode(record, seq: 9) else {
            Issue.record("a 4 GiB claim was not rejected")
            return
        }
        // The length is refused before anything is allocated (Zlib.maximumExpansion). Allocating
        // first costs nothing visible with glibc's lazy calloc, but seconds per record under the
        // sanitizers and a crash where memory is not overcommitted.
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    @Test func payload_compressedAtDeflatesMaximumRatio_stillInflates() throws {
        // 8 MiB of zeros compress about 1030:1 with zlib at level 9 (as records of earlier releases
        // were written; libdeflate stops at about 990:1), right below the bound the decoder enforces.
        let zeros = Data(count: 8 << 20)
        var prepared = try EventCodec.prepare(.put(key: "k", payload: zeros, timestamp: Date()), maxKeySize: 511, level: 9)
        var length = compressBound(uLong(zeros.count))
        var stream = [UInt8](repeating: 0, count: Int(length))
        let source = [UInt8](zeros)
        #expect(compress2(&stream, &length, source, uLong(source.count), 9) == Z_OK)
        prepared.body = Array(stream.prefix(Int(length)))
        #expect(prepared.body.count * 1000 < zeros.count)
        let record = EventCodec.encode(prepared, recordedAt: 0)
        guard case .success(let decoded) = Self.decode(record, seq: 1) else {
            Issue.record("a valid, highly compressed payload was refused")
            return
        }
        #expect(decoded.1 == zeros)
    }

    // MARK: records, stored in the database

    @Test(.hangGuard)
    func hostileStoredRecords_retrieveEventsAndVerify_neverCrash_andReportEveryBadRecordBySeq() async throws {
        let dir = try TemporaryDirectory()
        // Unsynced: the test rewrites records hundreds of times; durability is not what it checks.
        let log = try EventLog(path: dir.path(), options: .init(durability: .unsynced, checkpointInterval: 8))
        let keys = ["films", "genres", "verses", "people"]
        var generator = SeededGenerator(seed: 0x5707ED)
        for i in 0..<40 {
            let key = keys[i % keys.count]
            switch i % 5 {
            case 3: try await log.append(.delete(key: key, reason: .explicit))
            case 4: try await log.append(.expire(key: key, timestamp: Date(timeIntervalSince1970: 0), maxAge: 60))
            default:
                try await log.append([.delete(key: key, reason: .replaced),
                                      .put(key: key, payload: Data(generator.bytes(200 + i)), timestamp: Date())])
            }
        }
        let last = try log.lastSeq()
        #expect(try log.verify().isClean)
        let originals = try (1...last).map { try RawLMDB.record($0, in: log) }

        for _ in 0..<300 {
            // Damage one to three records, look at the log every way there is, then repair it.
            var damaged: [UInt64: [UInt8]] = [:]
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let seq = UInt64.random(in: 1...last, using: &generator)
                damaged[seq] = Self.mutate(damaged[seq] ?? originals[Int(seq - 1)], &generator)
            }
            for (seq, bytes) in damaged { try RawLMDB.replace(seq, with: bytes, in: log) }
            let undecodable = Set(damaged.filter { seq, bytes in
                if case .failure = Self.decode(bytes, seq: seq) { return true }
                return false
            }.keys)
            let badHeaders = Set(damaged.filter { seq, bytes in
                (try? bytes.withUnsafeBytes { try EventCodec.decodeHeader($0, seq: seq) }) == nil
            }.keys)

            try expectOnlyTypedErrors {
                for key in keys + ["absent"] { _ = try? log.entry(key); try typed { _ = try log.retrieve(key) } }
                for payloads in [false, true] {
                    let items = try log.events(EventQuery(includePayload: payloads))
                    #expect(items.map(\.seq) == Array(1...last), "every record is delivered, good or bad")
                    let corrupt = Set(items.compactMap { item -> UInt64? in
                        if case .corrupt(let seq, _) = item { return seq }
                        return nil
                    })
                    // Without payloads only the header is decoded; with them, the body too.
                    #expect((payloads ? undecodable : badHeaders).isSubset(of: corrupt), "corrupt \(corrupt), undecodable \(undecodable)")
                }
                _ = try log.events(EventQuery(key: "films", reverse: true))
                _ = try log.events(EventQuery(kinds: [.put], limit: 5))
                let report = try log.verify()
                let named = Set(report.problems.compactMap(\.seq))
                #expect(undecodable.isSubset(of: named), "verify names \(named), undecodable \(undecodable)")
                try typed { _ = try log.state() }
                try typed { _ = try log.state(asOf: .seq(UInt64.random(in: 1...last, using: &generator))) }
            }
            for seq in damaged.keys { try RawLMDB.replace(seq, with: originals[Int(seq - 1)], in: log) }
        }
        #expect(try log.verify().isClean)
    }

    /// Runs `body`; a thrown error must be a ``CacheLogError``.
    private func typed(_ body: () throws -> Void) throws {
        do { try body() } catch is CacheLogError {}
    }

    private func expectOnlyTypedErrors(_ body: () throws -> Void) throws {
        do { try body() } catch let error as CacheLogError {
            Issue.record("a read threw where it should report: \(error)")
        } catch {
            Issue.record("untyped error \(error)")
        }
    }

    // MARK: response bodies, into every contract mapper

    typealias Mapper = @Sendable (Data, HTTPResponse) throws -> Void

    static let mappers: [(String, Mapper)] = [
        ("image feed", { _ = try FeedImagesMapper.map($0, from: $1) }),
        ("films", { _ = try FilmsMapper.map($0, from: $1) }),
        ("genres", { _ = try GenresMapper.map($0, from: $1) }),
        ("verses", { _ = try VersesMapper.map($0, from: $1) }),
        ("people", { _ = try PeoplePageMapper.map($0, from: $1) }),
        ("image data", { _ = try FeedImageDataMapper.map($0, from: $1) }),
    ]

    /// A valid body of each contract, to mutate.
    static let validBodies = [
        #"{"items":[{"id":"73A7F70C-75DA-4C2E-B5A3-EED40DC53AA6","description":"a","location":"b","image":"https://a.example/1.png"}]}"#,
        #"[{"id":"58611129-2dbc-4a81-a72f-77ddfc1b1b49","title":"Totoro","description":"d","image":"https://a.example/t.png","url":"https://a.example/t"}]"#,
        #"{"genres":[{"id":1,"name":"Comedy"},{"id":2,"name":"News"}]}"#,
        #"[{"scripture":"John 3:16","distance":0.25,"text":"For God so loved"}]"#,
        #"{"count":82,"next":"https://a.example/?page=2","previous":null,"results":[{"name":"Luke","height":"172"}]}"#,
    ].map { Data($0.utf8) }

    @Test(.hangGuard)
    func hostileBodies_randomAndMutated_neverCrashAMapper_andFailOnlyAsInvalidData() throws {
        let response = HTTPResponse(url: try #require(URL(string: "https://a.example")), statusCode: 200)
        var generator = SeededGenerator(seed: 0x80D1E5)
        var bodies: [Data] = [
            Data(), Data("null".utf8), Data("{}".utf8), Data("[]".utf8), Data([0xFF, 0xFE, 0x00]),
            Data(String(repeating: "[", count: 100_000).utf8), // deep nesting
            Data(String(repeating: "{\"a\":", count: 20_000).utf8),
            Data(#"{"count":1e999999,"results":[]}"#.utf8), Data(#"[{"distance":-0.0e-99999}]"#.utf8),
            Data("\"\(String(repeating: "\\u0000", count: 10_000))\"".utf8),
        ]
        for _ in 0..<1500 {
            if Bool.random(using: &generator) {
                bodies.append(Data(generator.bytes(Int.random(in: 0...256, using: &generator))))
            } else {
                var body = [UInt8](Self.validBodies.randomElement(using: &generator)!)
                for _ in 0..<Int.random(in: 1...4, using: &generator) where !body.isEmpty {
                    let index = Int.random(in: 0..<body.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: body[index] = UInt8.random(in: 0...255, using: &generator)
                    case 1: body.remove(at: index)
                    default: body.insert(Array(#"{}[]",:0"#.utf8).randomElement(using: &generator)!, at: index)
                    }
                }
                bodies.append(Data(body))
            }
        }
        bodies += Self.validBodies
        let start = ContinuousClock.now
        var accepted = 0
        for body in bodies {
            for (name, map) in Self.mappers {
                do {
                    try map(body, response)
                    accepted += 1
                } catch let error as RemoteLoaderError {
                    #expect(error == .invalidData, "\(name)")
                } catch {
                    Issue.record("\(name) threw an untyped error \(error)")
                }
            }
        }
        // The valid bodies and the non-empty random ones (image data takes any bytes) do map.
        #expect(accepted >= Self.validBodies.count)
        #expect(ContinuousClock.now - start < .seconds(30), "no body may make mapping slow")
    }
}
