import Foundation
import TestSupport
import Testing

/// Keys are bytes: "café" written with a precomposed é (NFC) and with e + a combining accent (NFD)
/// are two keys in the log, and every command keeps them apart, although Swift's `String ==`
/// calls them equal.
@Suite("cachelog keys: Unicode normalization", .hangGuard)
struct KeyNormalizationTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    /// Two caches: films under the NFC key, genres under the NFD key.
    static func twoCafes() async throws -> Sandbox {
        let sandbox = try Sandbox()
        #expect(nfc == nfd, "the premise: Swift's String equality merges the two spellings")
        #expect(!Array(nfc.utf8).elementsEqual(Array(nfd.utf8)))
        for (key, contract) in [(nfc, "films"), (nfd, "genres")] {
            let result = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/\(contract).json"), "--key", key, "--contract", contract)
            try #require(result.status == ExitCode.ok, "\(result)")
        }
        return sandbox
    }

    @Test
    func state_key_showsExactlyTheKeyWithTheseBytes() async throws {
        let sandbox = try await Self.twoCafes()
        var sizes: [Int] = []
        for key in [Self.nfc, Self.nfd] {
            let result = try await sandbox.cachelog("state", "--key", key, "--format", "json")
            #expect(result.status == ExitCode.ok, "\(result)")
            let entries = try #require(try result.json()["entries"] as? [[String: Any]])
            #expect(entries.map { Array(($0.string("key") ?? "").utf8) } == [Array(key.utf8)], "\(result.stdout)")
            sizes += entries.compactMap { $0.int("bytes") }
        }
        // The films cache (NFC) is the larger payload, the genres cache (NFD) the smaller.
        #expect(sizes.count == 2 && sizes[0] > sizes[1], "\(sizes)")
        let all = try await sandbox.cachelog("state", "--format", "json")
        #expect((try all.json()["entries"] as? [[String: Any]])?.count == 2, "\(all.stdout)")
    }

    @Test
    func audit_keepsTheTwoKeysApart_withAndWithoutKey() async throws {
        let sandbox = try await Self.twoCafes()
        let all = try await sandbox.cachelog("--now", Day.dec2, "audit", "--format", "json")
        #expect(all.status == ExitCode.ok, "\(all)")
        let keys = try #require(try all.json()["keys"] as? [[String: Any]])
        #expect(Set(keys.map { Array(($0.string("key") ?? "").utf8) }) == [Array(Self.nfc.utf8), Array(Self.nfd.utf8)], "\(all.stdout)")
        #expect(keys.allSatisfy { ($0["timeline"] as? [[String: Any]])?.map { $0.string("kind") } == ["written"] }, "\(all.stdout)")

        for key in [Self.nfc, Self.nfd] {
            let one = try await sandbox.cachelog("--now", Day.dec2, "audit", "--key", key, "--format", "json")
            #expect(one.status == ExitCode.ok, "\(one)")
            let found = try #require(try one.json()["keys"] as? [[String: Any]])
            #expect(found.map { Array(($0.string("key") ?? "").utf8) } == [Array(key.utf8)], "\(one.stdout)")
        }
    }

    @Test
    func stats_countsEachKeyApart() async throws {
        let sandbox = try await Self.twoCafes()
        let json = try await sandbox.cachelog("stats", "--format", "json")
        #expect(json.status == ExitCode.ok, "\(json)")
        // Compared as bytes: parsing into a Swift dictionary would merge the two keys again.
        for key in [Self.nfc, Self.nfd] {
            #expect(occurrences(of: "\"\(key)\":{\"put\":1,\"delete\":1,\"expire\":0,\"total\":2}", in: json.stdout) == 1, "\(json.stdout)")
        }
        let text = try await sandbox.cachelog("stats")
        for key in [Self.nfc, Self.nfd] {
            #expect(text.stdoutLines.filter { Array($0.utf8).starts(with: Array((key + " ").utf8)) }.count == 1, "\(text.stdout)")
        }
    }

    @Test
    func replay_key_showsOnlyTheEventsOfTheKeyWithTheseBytes() async throws {
        let sandbox = try await Self.twoCafes()
        for key in [Self.nfc, Self.nfd] {
            let result = try await sandbox.cachelog("replay", "--key", key, "--format", "jsonl")
            #expect(result.status == ExitCode.ok, "\(result)")
            let events = try result.jsonLines()
            #expect(events.map { $0.string("type") } == ["delete", "put"])
            #expect(events.allSatisfy { Array(($0.string("key") ?? "").utf8) == Array(key.utf8) }, "\(result.stdout)")
        }
    }

    /// How many times `needle`'s UTF-8 bytes appear in `haystack`'s (String search would match
    /// canonically equivalent text too).
    private func occurrences(of needle: String, in haystack: String) -> Int {
        let bytes = Array(haystack.utf8), pattern = Array(needle.utf8)
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return 0 }
        return (0...(bytes.count - pattern.count)).filter { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }.count
    }
}
