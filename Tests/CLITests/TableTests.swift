import CacheLogReports
import FeedCacheLog
import Foundation
import TestSupport
import Testing
@testable import cachelog

/// Text tables stay tables: a key with control characters is escaped onto one row, wide
/// characters are padded by the columns they take, and counts agree with their nouns.
@Suite("Text tables", .hangGuard)
struct TableTests {
    @Test
    func keysWithTabsNewlinesAndEscapes_areEscaped_soEachRowIsOneLine_andJSONHasTheKey() async throws {
        let sandbox = try Sandbox()
        let keys = ["a\tb", "new\nline", "esc\u{1B}[31m", "back\\slash", "rtl\u{202E}gpj.exe", "para\u{2028}sep"]
        for key in keys {
            let load = try await sandbox.cachelog("load", sandbox.url("/films.json"), "--key", key)
            try #require(load.status == ExitCode.ok, "\(load)")
        }
        for command in [["state"], ["stats"], ["replay"], ["validate", "--dry-run"]] {
            let result = try await sandbox.run(["--db", sandbox.db] + command)
            #expect(result.status == ExitCode.ok, "\(command): \(result)")
            #expect(!result.stdout.contains("\t") && !result.stdout.contains(escape), "\(command): \(result)")
            #expect(!result.stdout.unicodeScalars.contains("\u{202E}") && !result.stdout.unicodeScalars.contains("\u{2028}"), "\(command): \(result)")
            for shown in ["a\\tb", "new\\nline", "esc\\u{1b}[31m", "back\\\\slash", "rtl\\u{202e}gpj.exe", "para\\u{2028}sep"] {
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
    func longKeys_areCutWithAnEllipsis_soTheColumnsAfterThemStayAligned_andJSONHasTheWholeKey() async throws {
        let sandbox = try Sandbox()
        let long = "search:star-wars-people:" + String(repeating: "skywalker-", count: 8)
        let keys = [long, "映" + String(repeating: "画", count: 30), "films"]
        for key in keys {
            let load = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", key)
            try #require(load.status == ExitCode.ok, "\(load)")
        }
        // state and stats size the key column to the widest key, up to 40 columns: every row,
        // and the header, is then exactly as wide, whatever the key.
        for command in ["state", "stats"] {
            let result = try await sandbox.cachelog("--now", Day.dec2, command)
            #expect(result.status == ExitCode.ok, "\(command): \(result)")
            let table = Array(result.stdoutLines.drop { !$0.hasPrefix("KEY") })
            #expect(table.count == 4, "\(command): \(result)")
            #expect(Set(table.map(EventPrinter.displayWidth)).count == 1, "\(command): \(table)")
            #expect(table.first?.hasPrefix("KEY" + String(repeating: " ", count: 39)) == true, "\(command): \(table)")
            #expect(table.contains { $0.hasPrefix("search:star-wars-peo…kywalker-skywalker-  ") }, "\(command): \(table)")
            #expect(table.contains { $0.hasPrefix("映" + String(repeating: "画", count: 9) + "…" + String(repeating: "画", count: 9) + "   ") }, "\(command): \(table)")
            #expect(!result.stdout.contains(long), "\(command) showed the whole long key: \(result)")
        }
        // replay streams, so its key column stays 20 wide: each put's detail starts at one column.
        let replay = try await sandbox.cachelog("replay", "--type", "put")
        let detailStarts = replay.stdoutLines.dropFirst().compactMap { row in row.range(of: "cached ").map { EventPrinter.displayWidth(String(row[..<$0.lowerBound])) } }
        #expect(detailStarts == [61, 61, 61], "\(replay)")
        #expect(replay.stdout.contains("search:sta…kywalker-  "), "\(replay)")
        let json = try await sandbox.cachelog("state", "--format", "json")
        #expect(Set((try json.json()["entries"] as? [[String: Any]])?.compactMap { $0.string("key") } ?? []) == Set(keys))
    }

    /// Without --now every time has milliseconds; a text table shows whole seconds, so that each
    /// row's columns start under their header's, and JSON keeps the milliseconds.
    @Test
    func tablesOnTheRealClock_showWholeSeconds_soRowsLineUpUnderTheirHeaders_andJSONKeepsMilliseconds() async throws {
        let sandbox = try Sandbox()
        for key in ["films", "genres"] {
            let load = try await sandbox.cachelog("load", sandbox.url("/\(key).json"), "--key", key, "--contract", key)
            try #require(load.status == ExitCode.ok, "\(load)")
        }
        let search = try await sandbox.cachelog("load", sandbox.url("/verses.json?q={query}"), "--contract", "verses", "--query", "love")
        try #require(search.status == ExitCode.ok, "\(search)")
        let wholeSecond = #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/#
        /// Each row holds a whole-second date under `dateHeader`, and its next column starts where
        /// the header's `nextHeader` does.
        func expectAligned(_ result: CLIResult, header: String, dateHeader: String, nextHeader: String, rows: Int) throws {
            let lines = result.stdoutLines
            let headerIndex = try #require(lines.firstIndex { $0.contains(dateHeader) }, "\(result)")
            let head = lines[headerIndex]
            let date = head.distance(from: head.startIndex, to: try #require(head.range(of: dateHeader)).lowerBound)
            let next = head.distance(from: head.startIndex, to: try #require(head.range(of: nextHeader)).lowerBound)
            let table = lines[(headerIndex + 1)...].prefix(rows)
            #expect(table.count == rows, "\(header): \(result)")
            for row in table {
                let cells = Array(row)
                let cell = String(cells[date..<min(next, cells.count)]).trimmingCharacters(in: .whitespaces)
                #expect(cell.wholeMatch(of: wholeSecond) != nil, "\(header): '\(cell)' in \(row)")
                #expect(cells.count > next && cells[next - 1] == " " && cells[next] != " ", "\(header): \(row) does not line up with \(head)")
            }
        }

        let state = try await sandbox.cachelog("state")
        try expectAligned(state, header: "state", dateHeader: "CACHED AT", nextHeader: "AGE", rows: 3)
        let replay = try await sandbox.cachelog("replay")
        try expectAligned(replay, header: "replay", dateHeader: "RECORDED AT", nextHeader: "TYPE", rows: 6)
        // audit and searches have no header: every line has the date column 20 wide.
        let audit = try await sandbox.cachelog("audit")
        let timeline = audit.stdoutLines.filter { $0.hasPrefix("  ") }
        #expect(timeline.count == 3, "\(audit)")
        for line in timeline {
            #expect(line.prefixMatch(of: #/  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  \S/#) != nil, "\(line)")
        }
        let searches = try await sandbox.cachelog("searches")
        #expect(searches.stdoutLines.count == 1 && searches.stdout.prefixMatch(of: #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  verses/#) != nil, "\(searches)")

        // JSON has the time the text cut to the second.
        let json = try await sandbox.cachelog("state", "--format", "json")
        let shown = state.stdoutLines.compactMap { $0.firstMatch(of: wholeSecond).map { String($0.output) } }
        let stamped = (try json.json()["entries"] as? [[String: Any]])?.compactMap { $0.string("timestamp") } ?? []
        #expect(stamped.count == 3 && zip(shown, stamped).allSatisfy { $1.hasPrefix($0.dropLast()) }, "\(shown) \(stamped)")
    }

    @Test
    func aKeyCut_keepsWholeCharacters_andTheWidthItWasGiven() {
        #expect(EventPrinter.truncated("short", to: 20) == "short")
        #expect(EventPrinter.truncated("abcdefghij", to: 5) == "ab…ij")
        #expect(EventPrinter.truncated("object:http://127.0.0.1:8000/people/11.json", to: 20) == "object:htt…e/11.json")
        // A wide character that would straddle the edge is left out, not split.
        #expect(EventPrinter.truncated("映画映画映画", to: 6) == "映…画")
        #expect(EventPrinter.displayWidth(EventPrinter.keyCell("映画映画映画映画映画映画", 7)) == 7)
        #expect(EventPrinter.truncated("👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦", to: 5) == "👨‍👩‍👧‍👦…👨‍👩‍👧‍👦")
    }

    @Test
    func audit_withAClockEarlierThanTheLog_saysSo_insteadOfANegativeDuration() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let audit = try await sandbox.cachelog("--now", "2026-11-01T00:00:00Z", "audit", "--key", "films")
        #expect(audit.status == ExitCode.ok, "\(audit)")
        #expect(audit.stdout.contains("no cache since then (the clock reads 2026-11-01T00:00:00Z, earlier)"), "\(audit)")
        #expect(!audit.stdout.contains("(-"), "\(audit)")
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
