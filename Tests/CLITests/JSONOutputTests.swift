@testable import CacheLog
import Foundation
import TestSupport
import Testing
@testable import cachelog
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("JSON output")
struct JSONOutputTests {
    // MARK: the replay fast path is ReplayLine, byte for byte

    @Test func fastPathAndEncoder_agreeOnHostileKeys() throws {
        var random = SplitMix(seed: 7)
        // A file of the test's own takes what the printer flushes (Tests/README.md: no system device).
        let directory = try TemporaryDirectory(prefix: "cachelog-json")
        let sink = open(directory.path("sink"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(sink >= 0)
        defer { close(sink) }
        for seq in 1...3_000 {
            let event = Self.event(seq: UInt64(seq), using: &random)
            let out = StandardOutput(descriptor: sink)
            EventPrinter.writeJSON(event, to: out)
            let fast = out.buffer
            let encoded = try JSONOutput().encode(ReplayLine(item: .event(event))) + [UInt8(ascii: "\n")]
            #expect(fast == encoded, "\(String(decoding: fast, as: UTF8.self)) vs \(String(decoding: encoded, as: UTF8.self))")
            guard fast == encoded else { break }
            // And it is JSON that gives the key back exactly, hostile or not.
            let object = try #require(JSONSerialization.jsonObject(with: Data(fast)) as? [String: Any])
            #expect((object["key"] as? String).map { Array($0.utf8) } == Array(event.key.utf8))
        }
    }

    /// A run that ends mid-line (killed, or stopped by a damaged database) leaves what was
    /// flushed: a part of a line is flushed only with its end, so `--format jsonl` is still one
    /// JSON value per line. (A replay stopped by LMDB's assertion left a cut payload.)
    @Test func aPartOfALine_isWrittenOnlyWithItsEnd() throws {
        let directory = try TemporaryDirectory(prefix: "cachelog-json")
        let path = directory.path("sink")
        let sink = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(sink >= 0)
        defer { close(sink) }
        let out = StandardOutput(descriptor: sink)
        for line in 0..<100 {
            out.append(#"{"payload":""#)
            out.write(String(repeating: "x", count: 3_000 + line))
            let written = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(written.isEmpty || written.last == UInt8(ascii: "\n"), "line \(line) was written in part: \(written.count) bytes")
            out.append(#""}"#)
            out.endLine()
        }
        out.flush()
        let lines = try String(decoding: Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 100 && lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
    }

    @Test func corruptRecord_isALineOfItsOwnShape() throws {
        let line = try JSONOutput().string(ReplayLine(item: .corrupt(seq: 9, detail: "checksum \"mismatch\"\n")))
        #expect(line == #"{"seq":9,"type":"corrupt","error":"checksum \"mismatch\"\n"}"#)
    }

    // MARK: the encoder

    private struct Sample: Encodable {
        let zeta = 1
        let alpha = "a/b"
        @NullWhenNil var absent: Date?
        let omitted: Int? = nil
        let week = 604_800.0
        let half = 0.5
        let notANumber = Double.nan
        let when = Date(timeIntervalSince1970: 1_796_119_200.5)
        let never = Date(timeIntervalSince1970: .infinity)
        let nested = ["z", "a"]
    }

    @Test func encoder_keepsTheOrderKeysWereWritten_andPrintsNumbersDatesAndNullsAsTheReportsDo() throws {
        let text = try JSONOutput().string(Sample())
        #expect(text == #"{"zeta":1,"alpha":"a/b","absent":null,"week":604800,"half":0.5,"notANumber":null,"when":"2026-12-01T10:00:00.500Z","never":null,"nested":["z","a"]}"#)
    }

    @Test func encoder_sortsKeysWhenAsked_asFeedItemsAreShown() throws {
        let text = try JSONOutput(keyOrder: .sorted).string(Sample())
        #expect(text.hasPrefix(#"{"absent":null,"alpha":"a/b","half":0.5,"nested""#))
    }

    @Test func encoder_writesRawJSONAsItIs() throws {
        #expect(try JSONOutput().string([RawJSON(#"{"n":9007199254740993}"#)]) == #"[{"n":9007199254740993}]"#)
    }

    // MARK: events to try

    private static let hostileKeys = [
        "films", "quote\"inside", "back\\slash", "line\nbreak", "tab\there", "\u{0}\u{1}\u{1f}\u{7f}", "emoji 🎞️👩‍👩‍👧",
        "caf\u{e9}", "cafe\u{301}", "/slash/", "\u{2028}\u{2029}", "", "search:people:\"sky\"\\",
    ]
    private static let instants: [Double] = [0, 1_796_119_200, 1_796_119_200.25, -1e300, 1e13, 253_402_300_800, .nan, .infinity, -.infinity]
    private static let maxAges: [Double?] = [nil, 604_800, 0.5, 1e300, .nan, .infinity, -.infinity]

    private static func event(seq: UInt64, using random: inout SplitMix) -> RecordedEvent {
        let kind = EventKind.allCases[random.next(EventKind.allCases.count)]
        var key = hostileKeys[random.next(hostileKeys.count)]
        if random.next(3) == 0 { key += String(UnicodeScalar(UInt8(random.next(0x80)))) }
        let at = Date(timeIntervalSince1970: instants[random.next(instants.count)])
        let timestamp = kind == .delete ? nil : Date(timeIntervalSince1970: instants[random.next(instants.count)])
        let contract = kind == .put && random.next(2) == 0 ? ["contract": hostileKeys[random.next(hostileKeys.count)]] : [:]
        let payloads: [Data?] = [nil, Data(#"{"a": [1, 2.50, "\u00e9"]}"#.utf8), Data([0xff, 0x00, 0x22]), Data("[]".utf8)]
        return RecordedEvent(
            seq: seq, recordedAt: at, formatVersion: 1, kind: kind, key: key, timestamp: timestamp,
            maxAge: kind == .delete ? nil : maxAges[random.next(maxAges.count)], metadata: contract,
            reason: kind == .delete ? Event.DeletionReason.allCases[random.next(Event.DeletionReason.allCases.count)] : nil,
            payloadBytes: random.next(1 << 20), storedBytes: random.next(1 << 20),
            payload: kind == .put ? payloads[random.next(payloads.count)] : nil)
    }
}

/// Reproducible randomness, so that a failure names an event that can be found again.
private struct SplitMix {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}
