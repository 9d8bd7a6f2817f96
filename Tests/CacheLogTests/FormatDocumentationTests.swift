import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

/// The format article promises that any LMDB binding plus zlib can read the log. This runs the
/// article's own Python reader against a real database and compares it with the engine.
@Suite("Format documentation")
struct FormatDocumentationTests {
    static let article = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/CacheLog/CacheLog.docc/Format.md")

    @Test func pythonReaderInTheFormatArticle_decodesEveryEventLikeTheEngine() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        let cachedAt = Date(timeIntervalSince1970: 1_796_119_200)
        // Saved under a policy: a max age and a contract in metadata after the body.
        let films = Event.put(
            key: "films", payload: payload(String(repeating: "[1,2,3]", count: 50)), timestamp: cachedAt, maxAge: 604_800,
            metadata: ["contract": "films"])
        try await log.append([.delete(key: "films", reason: .replaced), films])
        // An unchanged feed saved again: its put refers to the bytes of seq 2.
        try await log.append([.delete(key: "films", reason: .replaced), films])
        try await log.append(.expire(key: "films", timestamp: cachedAt, maxAge: 604_800))
        try await log.append(.put(key: "image:https://example.com/a.png", payload: Data([0, 1, 2, 255]), timestamp: cachedAt + 0.5))
        // Refreshes of a feed in which two films changed each time: chains of deltas, a whole
        // put wherever a chain reached its bound, and an unchanged refresh that refers to a delta.
        var generator = SeededGenerator(seed: 1)
        var feed = FilmFeed(count: 100, using: &generator)
        for refresh in 0..<(EventCodec.maxDeltaDepth + 4) {
            if refresh != 5 { feed.change(2, using: &generator) }
            try await log.append([.delete(key: "feed", reason: .replaced),
                                  .put(key: "feed", payload: feed.payload, timestamp: cachedAt + Double(refresh), metadata: ["contract": "films"])])
        }
        let recorded = try events(log, EventQuery(includePayload: true))
        #expect(recorded.filter { $0.isDelta }.count >= EventCodec.maxDeltaDepth)
        #expect(recorded.contains { $0.isReference && $0.key == "feed" && $0.storedBytes < 100 })

        let text = try String(contentsOf: Self.article, encoding: .utf8)
        let start = try #require(text.range(of: "```python\n"))
        let end = try #require(text.range(of: "```", range: start.upperBound..<text.endIndex))
        let script = String(text[start.upperBound..<end.lowerBound])
            .replacingOccurrences(of: "\"path/to/db\"", with: "\"\(dir.path())\"")

        let python = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script])
        let printed = python.stdoutText
        #expect(python.exited && python.status == 0, "the article's reader failed; is python3-lmdb installed (Tools/setup)? \(python.stderrText)")

        // Every version's payload, by its length and CRC-32, as the engine reads it.
        let expected = recorded.map { event in
            let crc = (event.payload ?? Data()).withUnsafeBytes { Zlib.crc32($0) }
            return "\(event.seq) \(event.kind.name) \(event.key) \(event.timestamp?.timeIntervalSince1970 ?? 0) \(event.payload?.count ?? 0) \(crc)"
        }
        #expect(printed.split(separator: "\n").map(String.init) == expected)
    }
}
