import FeedCache
import CacheLogReports
import FeedCacheLog
import Foundation
import TestSupport
import Testing
@testable import cachelog

/// Durations past 100 years are usage errors, so no max age overflows the calendar; numbers read
/// from the log, whatever they are, are shown without trapping.
@Suite("Durations and stored numbers", .hangGuard)
struct DurationBoundTests {
    // MARK: through the binary

    @Test(arguments: [
        ["audit", "--max-age", "9223372036854775807s"],
        ["audit", "--max-age", "36501d"],
        ["audit", "--max-age", "99999999999999999999999h"],
        ["load", "http://127.0.0.1:9/films.json", "--key", "films", "--max-age", "9223372036854775807s"],
        ["validate", "--max-age", "9223372036854775807s"],
        ["validate", "--dry-run", "--max-age", "36501d"],
    ])
    func maxAgePastTheBound_isAUsageError_namingTheBound(_ arguments: [String]) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["--db", sandbox.db] + arguments)
        #expect(result.status == ExitCode.usage, "\(result)")
        #expect(result.stdout.isEmpty)
        let error = try #require(result.stderrLines.first, "nothing on stderr")
        #expect(error.hasPrefix("cachelog: "), "\(error)")
        #expect(error.contains("at most 36500d (100 years)"), "\(error)")
        #expect(!looksLikeACrash(result.stderr))
        #expect(!FileManager.default.fileExists(atPath: sandbox.db))
    }

    @Test
    func validate_maxAgePastTheBound_isAUsageError_andExpiresNothing() async throws {
        let sandbox = try Sandbox()
        let saved = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        try #require(saved.status == ExitCode.ok, "\(saved)")

        let validated = try await sandbox.cachelog("--now", Day.dec2, "validate", "--max-age", "9223372036854775807s")
        #expect(validated.status == ExitCode.usage, "\(validated)")
        #expect(validated.stderrLines.first?.contains("9223372036854775807s") == true, "\(validated)")

        let replay = try await sandbox.cachelog("replay", "--format", "jsonl")
        #expect(try replay.jsonLines().map { $0.string("type") } == ["delete", "put"])
        let audit = try await sandbox.cachelog("--now", Day.dec2, "audit")
        #expect(audit.status == ExitCode.ok, "\(audit)")
    }

    @Test
    func maxAgeAtTheBound_keepsADayOldCacheFresh() async throws {
        let sandbox = try Sandbox()
        let saved = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        try #require(saved.status == ExitCode.ok, "\(saved)")
        sandbox.server.setHandler { _ in .status(500) }

        let offline = try await sandbox.cachelog(
            "--now", Day.dec2, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films", "--max-age", "36500d")
        #expect(offline.status == ExitCode.ok, "\(offline)")
        #expect(offline.stdoutLines.first == "films: 2 items from cache, cached 2026-12-01T10:00:00Z (age 1d)")

        let audit = try await sandbox.cachelog("--now", Day.dec2, "audit", "--max-age", "36500d", "--format", "json")
        #expect(audit.status == ExitCode.ok, "\(audit)")
        let timeline = try #require((try audit.json()["keys"] as? [[String: Any]])?.first?["timeline"] as? [[String: Any]])
        #expect(timeline.map { $0.string("kind") } == ["written"])
    }

    // MARK: the parts

    @Test(arguments: ["90s", "36500d", "876000h", "52560000m", "3153600000s"])
    func maxAgeArgument_acceptsDurationsUpToTheBound(_ text: String) throws {
        #expect(try MaxAgeArgument.parse(text).description == text)
    }

    @Test(arguments: [
        ("0d", MaxAge.ParseError.notPositive), ("0s", .notPositive), ("7x", .notADuration), ("-1d", .negative), ("d", .notADuration),
        ("1.5d", .notWhole(suggestion: "36h")), ("0.5m", .notWhole(suggestion: "30s")), ("7days", .spelledOut(suggestion: "7d")),
        ("7 days", .spelledOut(suggestion: "7d")), ("2 weeks", .spelledOut(suggestion: "2w")), ("12hours", .spelledOut(suggestion: "12h")),
    ])
    func maxAgeArgument_saysWhatIsWrong(_ text: String, _ problem: MaxAge.ParseError) {
        #expect(throws: problem) { try MaxAgeArgument.parse(text) }
    }

    @Test(arguments: [("1w", "7d"), ("2w", "14d"), ("5214w", "36498d")])
    func maxAgeArgument_takesWeeks_andPrintsThemAsDays(_ text: String, _ printed: String) throws {
        #expect(try MaxAgeArgument.parse(text).description == printed)
    }

    @Test(arguments: ["36501d", "5215w", "9999999999999999999w", "876001h", "52560001m", "3153600001s", "9223372036854775807s", "99999999999999999999d"])
    func maxAgeArgument_refusesDurationsPastTheBound(_ text: String) {
        #expect(throws: MaxAge.ParseError.tooLong) { try MaxAgeArgument.parse(text) }
        #expect(MaxAgeArgument(argument: text) == nil)
    }

    @Test(arguments: [
        (Double.nan, "nan"), (.infinity, "inf"), (-.infinity, "-inf"), (Double(Int.max), "106751991167300d"),
        (-1e300, "-1e+300s"), (0, "0s"), (90061, "1d 1h"),
    ])
    func durationText_showsAnyStoredNumber(_ seconds: Double, _ expected: String) {
        #expect(DurationText.string(seconds) == expected)
    }

    @Test(arguments: [(Double.nan, "null"), (.infinity, "null"), (-.infinity, "null"), (1e300, "1e+300"), (42, "42"), (0.5, "0.5")])
    func jsonNumber_isAlwaysJSON(_ value: Double, _ expected: String) {
        #expect(JSONText.number(value) == expected)
    }

    @Test(arguments: [
        (Double.nan, "nan", "null"), (.infinity, "inf", "null"), (-.infinity, "-inf", "null"),
        (1e13, "@10000000000000", "\"@10000000000000\""), (-1e300, "@-1e+300", "\"@-1e+300\""),
        (253_402_300_800, "@253402300800", "\"@253402300800\""), // 10000-01-01
        (253_402_300_799, "9999-12-31T23:59:59Z", "\"9999-12-31T23:59:59Z\""),
    ])
    func storedDates_areShownWhateverTheyHold(_ seconds: Double, _ text: String, _ json: String) {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(DateParsing.string(date) == text)
        #expect(JSONText.date(date) == json)
    }
}
