import Foundation
import TestSupport
import Testing

/// Times as people write them: a bare day given to --to is that whole day, and every option that
/// takes a time takes a duration before --now (`7d`, `-7d`), resolved against --now.
@Suite("Relative times and whole days", .hangGuard)
struct RelativeTimeTests {
    private func seqs(_ result: CLIResult) throws -> [Int] {
        try #require(result.status == ExitCode.ok, "\(result)")
        return try result.jsonLines().compactMap { $0.int("seq") }
    }

    @Test
    func toABareDay_includesThatWholeDay() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        #expect(try seqs(await sandbox.cachelog("replay", "--to", "2026-12-02", "--format", "jsonl")) == [1, 2, 3, 4])
        #expect(try seqs(await sandbox.cachelog("replay", "--from", "2026-12-02", "--to", "2026-12-02", "--format", "jsonl")) == [3, 4])
        // A full timestamp is still exact.
        #expect(try seqs(await sandbox.cachelog("replay", "--to", "2026-12-02T09:59:59Z", "--format", "jsonl")) == [1, 2])
    }

    @Test
    func fromAndTo_takeDurationsBeforeNow() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        // --now Dec 4 10:00: 2d is Dec 2 10:00, 1d is Dec 3 10:00.
        #expect(try seqs(await sandbox.cachelog("--now", Day.dec4, "replay", "--from", "2d", "--to", "1d", "--format", "jsonl")) == [3, 4, 5, 6])
        #expect(try seqs(await sandbox.cachelog("--now", Day.dec4, "replay", "--from", "-48h", "--format", "jsonl")) == [3, 4, 5, 6, 7, 8])
    }

    @Test(arguments: ["7d", "-7d", "1w", "168h"])
    func stateAsOf_aDurationBeforeNow_isTheStateThen(_ ago: String) async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        // A week before Dec 10 10:00 is Dec 3 10:00: both keys were live (expired on Dec 10).
        let then = try await sandbox.cachelog("--now", Day.dec10, "state", "--as-of", ago, "--format", "json")
        #expect(then.status == ExitCode.ok, "\(then)")
        let exact = try await sandbox.cachelog("--now", Day.dec10, "state", "--as-of", Day.dec3, "--format", "json")
        #expect(then.stdout == exact.stdout)
        #expect((try then.json()["entries"] as? [[String: Any]])?.compactMap { $0.string("key") } == ["films", "genres"])
    }

    @Test
    func compactBefore_aDuration_isTheSameAsTheDateItNames() async throws {
        let relative = try Sandbox(), absolute = try Sandbox()
        try await relative.seedHistory()
        try await absolute.seedHistory()
        let byDuration = try await relative.cachelog("--now", Day.dec10, "compact", "--before", "8d")
        let byDate = try await absolute.cachelog("--now", Day.dec10, "compact", "--before", Day.dec2)
        #expect(byDuration.status == ExitCode.ok, "\(byDuration)")
        #expect(byDuration.stdout == byDate.stdout)
        #expect(byDuration.stdout.hasPrefix("removed "))
    }

    static let durationMistakes: [(arguments: [String], says: String)] = [
        (["validate", "--max-age", "1.5d"], "write 36h"),
        (["validate", "--max-age", "7days"], "7d"),
        (["validate", "--max-age", "7 days"], "7d"),
        (["validate", "--max-age", "0s"], "more than 0"),
        (["validate", "--max-age", "-1d"], "negative duration is not allowed"),
        (["audit", "--max-age", "-1d"], "negative duration is not allowed"),
        (["compact", "--keep", "-30d"], "negative duration is not allowed"),
        (["compact", "--keep", "2 weeks"], "2w"),
        (["state", "--as-of", "1.5d"], "write 36h"),
        (["replay", "--from", "7x"], "s, m, h, d or w"),
        (["load", "http://127.0.0.1:1/x", "--key", "k", "--retries", "-1"], "--retries must be between 0 and 10"),
    ]

    @Test(arguments: durationMistakes)
    func aBadDuration_isAUsageError_thatSaysHowToWriteIt(arguments: [String], says: String) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["--db", sandbox.db] + arguments)
        #expect(result.status == ExitCode.usage, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains(says), "\(result)")
        #expect(!result.stderr.contains("Missing value"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.db))
    }

    @Test(arguments: ["replay", "state", "compact", "validate", "audit"])
    func help_ofEveryCommandThatTakesTimes_showsTheForms(_ command: String) async throws {
        let sandbox = try Sandbox()
        let help = try await sandbox.run([command, "--help"])
        #expect(help.status == ExitCode.ok)
        // Words, whatever the wrapping.
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("1w"), "\(help)")
        if command != "validate" && command != "audit" {
            #expect(text.contains("7d or -7d"), "\(help)")
            #expect(text.contains("2026-12-01T10:00:00Z"), "\(help)")
        }
    }
}
