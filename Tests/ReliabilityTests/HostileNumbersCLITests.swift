import CacheLog
import Foundation
import TestSupport
import Testing

/// Records whose numbers no clock or policy would write (a NaN or infinite timestamp or max age, a
/// date a million years away, the max age of `Int.max` seconds an old `validate` recorded), made
/// with the library and read by the built `cachelog` binary: every reading command shows them and
/// exits 0, never traps, and its JSON stays JSON.
@Suite("Hostile numbers through the cachelog binary", .hangGuard)
struct HostileNumbersCLITests {
    static let reading: [[String]] = [
        ["replay"], ["replay", "--format", "jsonl"], ["replay", "--payload", "--format", "jsonl"], ["replay", "--reverse"],
        ["state"], ["state", "--format", "json"], ["state", "--as-of", "3"],
        ["audit"], ["audit", "--format", "json"], ["stats"], ["stats", "--format", "json"],
    ]

    @Test(arguments: reading)
    func readingCommand_showsNonFiniteAndHugeNumbers_exitsZero_andPrintsValidJSON(_ arguments: [String]) async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path()
        try await Self.plantHostileNumbers(db)

        let result = try await runCachelog(["--db", db, "--now", "2026-12-10T10:00:00Z"] + arguments)

        #expect(result.exited, "cachelog \(arguments.joined(separator: " ")) died of signal \(result.status): \(result.stderr)")
        #expect(result.status == 0, "cachelog \(arguments.joined(separator: " ")): \(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        if arguments.contains("jsonl") {
            for line in result.stdout.split(separator: "\n") {
                #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "not JSON: \(line)")
            }
        } else if arguments.contains("json") {
            #expect((try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) != nil, "not JSON: \(result.stdout)")
        }
    }

    @Test
    func replay_showsNonFiniteNumbersAsNanAndInfInText_andNullInJSON() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path()
        try await Self.plantHostileNumbers(db)

        let text = try await runCachelog(["--db", db, "replay"])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains("nan-put") && $0.contains("cached nan,") }, "\(text.stdout)")
        #expect(lines.contains { $0.contains("inf-put") && $0.contains("cached inf,") }, "\(text.stdout)")
        #expect(lines.contains { $0.contains("far-put") && $0.contains("cached @1e+300,") }, "\(text.stdout)")
        #expect(lines.contains { $0.contains("expire") && $0.contains("cached nan was nan old or more") }, "\(text.stdout)")
        #expect(lines.contains { $0.contains("expire") && $0.contains("was -inf old or more") }, "\(text.stdout)")
        #expect(lines.contains { $0.contains("expire") && $0.contains("was 106751991167300d old or more") }, "\(text.stdout)")

        let jsonl = try await runCachelog(["--db", db, "replay", "--format", "jsonl"])
        #expect(jsonl.status == 0, "\(jsonl.stderr)")
        let events = try jsonl.stdout.split(separator: "\n").map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
        let nanPut = try #require(events.first { $0["key"] as? String == "nan-put" && $0["type"] as? String == "put" })
        #expect(nanPut["timestamp"] is NSNull)
        let nanExpire = try #require(events.first { $0["key"] as? String == "nan-put" && $0["type"] as? String == "expire" })
        #expect(nanExpire["maxAge"] is NSNull)
        #expect(nanExpire["timestamp"] is NSNull)
        let infExpire = try #require(events.first { $0["key"] as? String == "inf-put" && $0["type"] as? String == "expire" })
        #expect(infExpire["maxAge"] is NSNull)
        #expect(!jsonl.stdout.contains("inf,") && !jsonl.stdout.contains("nan,"), "\(jsonl.stdout)")
    }

    @Test
    func stateAndAudit_showANaNTimestampWithoutTrapping() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path()
        try await Self.plantHostileNumbers(db)

        let state = try await runCachelog(["--db", db, "--now", "2026-12-10T10:00:00Z", "state", "--format", "json"])
        #expect(state.status == 0, "\(state.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(state.stdout.utf8)) as? [String: Any])
        let entries = try #require(json["entries"] as? [[String: Any]])
        let nan = try #require(entries.first { $0["key"] as? String == "nan-live" }, "\(state.stdout)")
        #expect(nan["timestamp"] is NSNull)

        let audit = try await runCachelog(["--db", db, "--now", "2026-12-10T10:00:00Z", "audit", "--key", "nan-live"])
        #expect(audit.status == 0, "\(audit.stderr)")
        #expect(audit.stdout.contains("written (cached nan,"), "\(audit.stdout)")

        let text = try await runCachelog(["--db", db, "--now", "2026-12-10T10:00:00Z", "state", "--key", "nan-live"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.split(separator: "\n").contains { $0.hasPrefix("nan-live") && $0.contains(" nan ") }, "\(text.stdout)")
    }

    /// One key per hostile number, each a put (and for some an expire) appended through the library.
    static func plantHostileNumbers(_ db: String) async throws {
        let log = try EventLog(path: db)
        let payload = Data(#"[{"title":"x"}]"#.utf8)
        let day = Date(timeIntervalSince1970: 1_796_119_200) // 2026-12-01T10:00:00Z
        try await log.append([
            .put(key: "nan-put", payload: payload, timestamp: Date(timeIntervalSince1970: .nan)),
            .put(key: "inf-put", payload: payload, timestamp: Date(timeIntervalSince1970: .infinity)),
            .put(key: "neg-inf-put", payload: payload, timestamp: Date(timeIntervalSince1970: -.infinity)),
            .put(key: "far-put", payload: payload, timestamp: Date(timeIntervalSince1970: 1e300)),
            .put(key: "films", payload: payload, timestamp: day),
            // Stays live: the expire below is about another key.
            .put(key: "nan-live", payload: payload, timestamp: Date(timeIntervalSince1970: .nan)),
        ])
        try await log.append([
            .expire(key: "nan-put", timestamp: Date(timeIntervalSince1970: .nan), maxAge: .nan),
            .expire(key: "inf-put", timestamp: Date(timeIntervalSince1970: .infinity), maxAge: .infinity),
            .expire(key: "neg-inf-put", timestamp: Date(timeIntervalSince1970: -.infinity), maxAge: -.infinity),
            // What `validate --max-age 9223372036854775807s` recorded before durations were bounded.
            .expire(key: "films", timestamp: day, maxAge: TimeInterval(Int.max)),
        ])
    }

    private func runCachelog(_ arguments: [String]) async throws -> (status: Int32, exited: Bool, stdout: String, stderr: String) {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "CACHELOG_NOW")
        environment.removeValue(forKey: "CACHELOG_DB")
        let ended = try await ChildProcess.run(try builtProduct("cachelog"), arguments, environment: environment)
        return (ended.status, ended.exited, ended.stdoutText, ended.stderrText)
    }
}
