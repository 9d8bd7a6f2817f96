import Foundation
import Testing
@testable import cachelog

/// Text tables stay tables: a key with control characters is escaped onto one row, wide
/// characters are padded by the columns they take, and counts agree with their nouns.
@Suite("Text tables", .timeLimit(.minutes(2)))
struct TableTests {
    @Test
    func keysWithTabsNewlinesAndEscapes_areEscaped_soEachRowIsOneLine_andJSONHasTheKey() async throws {
        let sandbox = try Sandbox()
        let keys = ["a\tb", "new\nline", "esc\u{1B}[31m", "back\\slash"]
        for key in keys {
            let load = try await sandbox.cachelog("load", sandbox.url("/films.json"), "--key", key)
            try #require(load.status == ExitCode.ok, "\(load)")
        }
        for command in [["state"], ["stats"], ["replay"], ["validate", "--dry-run"]] {
            let result = try await sandbox.run(["--db", sandbox.db] + command)
            #expect(result.status == ExitCode.ok, "\(command): \(result)")
            #expect(!result.stdout.contains("\t") && !result.stdout.contains(escape), "\(command): \(result)")
            for shown in ["a\\tb", "new\\nline", "esc\\u{1b}[31m", "back\\\\slash"] {
                #expect(result.stdout.contains(shown), "\(command) \(shown): \(result)")
            }
        }
        let json = try await sandbox.cachelog("state", "--format", "json")
        #expect(Set((try json.json()["entries"] as? [[String: Any]])?.compactMap { $0.string("key") } ?? []) == Set(keys))
    }

    @Test
    func wideKeys_keepTheColumnsAligned() async throws {
        let sandbox = try Sandbox()
        for key in ["🎬films", "映画", "plain"] {
            let load = try await sandbox.cachelog("load", sandbox.url("/films.json"), "--key", key)
            try #require(load.status == ExitCode.ok, "\(load)")
        }
        let stats = try await sandbox.cachelog("stats")
        let rows = stats.stdoutLines.filter { ["🎬films", "映画", "plain"].contains(where: $0.hasPrefix) }
        #expect(rows.count == 3, "\(stats)")
        // Every row's PUT column ends at the same terminal column.
        let widths = rows.map { row in EventPrinter.displayWidth(String(row.prefix { $0 != "1" })) }
        #expect(Set(widths).count == 1, "\(rows)")
        #expect(EventPrinter.displayWidth("映画") == 4 && EventPrinter.displayWidth("🎬") == 2 && EventPrinter.displayWidth("é") == 1)
    }

    @Test
    func oneCheckpoint_isSingular() {
        #expect(counted(1, "checkpoint") == "1 checkpoint")
        #expect(counted(0, "checkpoint") == "0 checkpoints")
        #expect(counted(2, "record") == "2 records")
    }

    @Test
    func aNowBeforeTheLastEvent_saysOnStderr_thatRecordedTimeStayedLater() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let result = try await sandbox.cachelog("--now", Day.dec2, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stderrLines == [
            "cachelog: --now 2026-12-02T10:00:00Z is before the last recorded event (seq 8, 2026-12-10T10:00:00Z); what this run appends is recorded at that later time, since recorded time never goes backward (ages are still judged at --now)",
        ], "\(result)")
        let last = try await sandbox.cachelog("replay", "--from", "9", "--format", "jsonl")
        #expect(try last.jsonLines().allSatisfy { $0.string("at") == Day.dec10 }, "\(last)")
        // A --now at or after the log says nothing.
        let later = try await sandbox.cachelog("--now", Day.dec10, "validate")
        #expect(later.stderr.isEmpty, "\(later)")
    }
}
