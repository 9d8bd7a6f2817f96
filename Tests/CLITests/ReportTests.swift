import Foundation
import TestSupport
import Testing

/// `cachelog report` written by the built binary and opened in a real headless browser: the keys,
/// their bands and marks are in the DOM after the page's script ran, the slider's moment gives
/// each key's state, hostile keys stay text, the console stays silent, and the numbers agree with
/// `replay`, which reads the log by another path.
@Suite("cachelog report", .hangGuard)
struct ReportTests {
    /// Both loads record the contract's 7-day max age.
    ///
    ///     films   fresh Dec 1 → Dec 10 (saved Dec 1 and Dec 3), stale → Dec 12, expired: missing → Dec 14
    ///     genres  none → Dec 2, fresh → Dec 9, stale → Dec 12, expired: missing → Dec 13, fresh → Dec 14
    static let hostileKey = "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">\"'&</script><script>document.documentElement.setAttribute('data-pwned','script')</script>\u{1b}[31m\nline 🎞️ café"

    func buildHistory(_ sandbox: Sandbox) async throws {
        for (now, key, contract) in [(Day.dec1, "films", "films"), ("2026-12-02T10:00:00Z", "genres", "genres"),
                                     (Day.dec3, "films", "films"), (Day.dec3, Self.hostileKey, "any")] {
            let path = contract == "any" ? "/any.json" : "/\(contract).json"
            let result = try await sandbox.cachelog("--now", now, "load", sandbox.url(path), "--key", key, "--contract", contract == "any" ? "json" : contract)
            try #require(result.status == ExitCode.ok, "\(result)")
        }
        let validated = try await sandbox.cachelog("--now", "2026-12-12T10:00:00Z", "validate")
        try #require(validated.status == ExitCode.ok, "\(validated)")
        let reloaded = try await sandbox.cachelog("--now", "2026-12-13T10:00:00Z", "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres", "--strategy", "remote-first")
        try #require(reloaded.status == ExitCode.ok, "\(reloaded)")
    }

    @Test
    func report_inAHeadlessBrowser_drawsEachKeysBandsAndMarks_andTheSliderGivesEachKeysState() async throws {
        let browser = try HeadlessBrowser()
        let sandbox = try Sandbox()
        try await buildHistory(sandbox)
        let file = sandbox.path("history.html")
        let written = try await sandbox.cachelog("--now", "2026-12-14T10:00:00Z", "report", "--out", file)
        #expect(written.status == ExitCode.ok, "\(written)")
        #expect(written.stdout.isEmpty && written.stderr.isEmpty, "\(written)")
        let url = URL(fileURLWithPath: file)

        // Dec 11: both keys past their max age, not yet expired.
        let dec11 = try await browser.dumpDOM(try #require(URL(string: url.absoluteString + "#at=2026-12-11T00:00:00Z")))
        #expect(dec11.console.isEmpty, "console: \(dec11.console)")
        let page = HTMLPage(dec11.dom)
        #expect(page.rootAttribute("data-ready") == "1", "the page's script did not finish")
        #expect(page.rootAttribute("data-errors") == "", "errors on the page: \(page.rootAttribute("data-errors") ?? "")")
        #expect(page.rootAttribute("data-pwned") == nil, "a key ran as script")
        #expect(page.count("<img") == 0, "a key became an element")
        #expect(page.count("<script") == 3, "a key became a script element")

        let shownHostile = "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">\"'&</script><script>document.documentElement.setAttribute('data-pwned','script')</script>\\u{1b}[31m\\nline 🎞️ café"
        // In byte order, as the log keys them: "<" sorts before letters.
        #expect(page.labels == [shownHostile, "films", "genres"], "timeline rows: \(page.labels)")
        #expect(page.tableKeys == [shownHostile, "films", "genres"], "table rows: \(page.tableKeys)")

        #expect(page.bands(of: "films") == ["fresh": 1, "stale": 1, "missing": 1])
        #expect(page.bands(of: "genres") == ["none": 1, "fresh": 2, "stale": 1, "missing": 1])
        #expect(page.marks(of: "films") == ["put": 2, "expire": 1])
        #expect(page.marks(of: "genres") == ["put": 2, "expire": 1])
        #expect(page.stateAtMoment == ["films": "stale", "genres": "stale", shownHostile: "stale"])
        #expect(page.element("span id=\"counts\"")?.contains("data-stale=\"3\"") == true)

        // Dec 13, noon: films expired, genres saved again that morning.
        let dec13 = try await browser.dumpDOM(try #require(URL(string: url.absoluteString + "#at=2026-12-13T12:00:00Z")))
        #expect(dec13.console.isEmpty, "console: \(dec13.console)")
        #expect(HTMLPage(dec13.dom).stateAtMoment == ["films": "missing", "genres": "fresh", shownHostile: "missing"])

        // The table against replay, which reads the whole log rather than the key index.
        let replay = try await sandbox.cachelog("replay", "--format", "jsonl")
        let perKey = Dictionary(grouping: try replay.jsonLines(), by: { EventPrinterForm.display($0.string("key") ?? "") }).mapValues(\.count)
        #expect(page.eventCounts == perKey)
        #expect(page.eventCounts["films"] == 5)
        // Stale Dec 10 10:00 → Dec 12 10:00; missing Dec 12 10:00 → Dec 14 10:00.
        let day = 86_400.0
        #expect(page.seconds(of: "films") == [9 * day, 2 * day, 2 * day])

        let screenshot = sandbox.path("report.png")
        let shot = try await browser.screenshot(url, to: screenshot)
        #expect(shot.console.isEmpty, "console: \(shot.console)")
        let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "not a PNG")
        #expect(png.count > 10_000, "a \(png.count)-byte screenshot is too small to show the page")
        print("report browser test: chromium took \(dec11.seconds), \(dec13.seconds) and \(shot.seconds) s")
    }

    @Test
    func report_window_keyPrefix_andStdout_selectWhatTheTableCounts() async throws {
        let sandbox = try Sandbox()
        for (now, key) in [(Day.dec1, "search:b"), (Day.dec2, "films"), (Day.dec3, "search:a"), (Day.dec4, "search:b"), (Day.dec8, "searchless")] {
            let result = try await sandbox.cachelog("--now", now, "load", sandbox.url("/any.json"), "--key", key, "--contract", "json")
            try #require(result.status == ExitCode.ok, "\(result)")
        }
        let prefixed = try await sandbox.cachelog("--now", Day.dec10, "report", "--key-prefix", "search:")
        #expect(prefixed.status == ExitCode.ok, "\(prefixed)")
        #expect(prefixed.stdout.hasPrefix("<!doctype html>"))
        #expect(HTMLPage(prefixed.stdout).tableKeys == ["search:a", "search:b"])
        #expect(HTMLPage(prefixed.stdout).eventCounts == ["search:a": 2, "search:b": 4])

        // A window: events counted only within it; a bare --to day includes that whole day.
        let window = try await sandbox.cachelog("--now", Day.dec10, "report", "--key", "films", "--key-prefix", "search:b", "--from", "2026-12-02", "--to", "2026-12-03", "--out", "-")
        #expect(window.status == ExitCode.ok, "\(window)")
        #expect(HTMLPage(window.stdout).eventCounts == ["films": 2, "search:b": 0])
        let oracle = try await sandbox.cachelog("replay", "--from", "2026-12-02", "--to", "2026-12-03", "--format", "jsonl")
        #expect(try oracle.jsonLines().filter { ["films", "search:b"].contains($0.string("key")) }.count == 2)
    }

    @Test
    func report_refusesJSON_anUnknownKey_andAnUnwritablePath_inOneLine() async throws {
        let sandbox = try Sandbox()
        let loaded = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        try #require(loaded.status == ExitCode.ok, "\(loaded)")
        for arguments in [["report", "--format", "json"], ["--format", "json", "report", "--out", sandbox.path("x.html")], ["report", "--format", "jsonl"]] {
            let refused = try await sandbox.run(["--db", sandbox.db] + arguments)
            #expect(refused.status == ExitCode.usage, "\(refused)")
            #expect(refused.stderrLines.count == 1 && refused.stderr.contains("HTML page"), "\(refused)")
        }
        let unwritable = try await sandbox.cachelog("--now", Day.dec2, "report", "--out", sandbox.path("no-such-directory/history.html"))
        #expect(unwritable.status == ExitCode.failure, "\(unwritable)")
        #expect(unwritable.stderrLines == ["cachelog: cannot write \(sandbox.path("no-such-directory/history.html")): No such file or directory"])
        let unknown = try await sandbox.cachelog("report", "--key", "nope")
        #expect(unknown.status == ExitCode.failure, "\(unknown)")
        #expect(unknown.stderrLines.count == 1 && unknown.stderr.contains("no key 'nope'"), "\(unknown)")
        let backwards = try await sandbox.cachelog("report", "--from", Day.dec4, "--to", Day.dec2)
        #expect(backwards.status == ExitCode.usage, "\(backwards)")
        #expect(backwards.stderrLines.count == 1, "\(backwards)")
        // The page is written whole: nothing is left beside it.
        let file = sandbox.path("out.html")
        let written = try await sandbox.cachelog("--now", Day.dec2, "report", "--out", file)
        #expect(written.status == ExitCode.ok, "\(written)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path).filter { $0.hasPrefix("out.html") } == ["out.html"])
    }

    /// More events per key than the page has columns: counted per column, and the page's size
    /// follows keys × columns, not events.
    @Test
    func report_manyEvents_areCountedPerColumn_andThePageStaysSmall() async throws {
        let sandbox = try Sandbox()
        let writer = try await ChildProcess.run(try builtProduct("cachelog-writer"), [sandbox.db, "20000", "--history", "--keys", "40", "--days", "30", "--seed", "7"])
        try #require(writer.status == 0, "\(writer.stderrText)")
        let file = sandbox.path("big.html")
        let written = try await sandbox.cachelog("--now", "2026-10-01T00:00:00Z", "report", "--out", file)
        #expect(written.status == ExitCode.ok, "\(written)")
        let html = try String(contentsOfFile: file, encoding: .utf8)
        let page = HTMLPage(html)
        #expect(page.eventCounts.values.reduce(0, +) == 20_000)
        let data = try page.data()
        let keys = try #require(data["keys"] as? [[String: Any]])
        #expect(keys.count == 40)
        let digits = Array("0123456789abcdefghijklmnopqrstuvwxyABCDEFGHIJKLMNOPQRSTUVWXYZ")
        for key in keys {
            let name = key.string("key") ?? "?"
            let marks = (key["marks"] as? [Any])?.count ?? 0
            let counts = try #require(key.string("counts"), "\(name): no counts")
            #expect(marks == 0 && counts.count == 240 * 4, "\(name): \(marks) marks, \(counts.count) count digits")
            #expect((key["overflow"] as? [Int]) == [], "\(name): no column holds 61 events of a kind here")
            let counted = counts.reduce(0) { $0 + (digits.firstIndex(of: $1) ?? 1000) }
            let puts = key.int("puts") ?? 0, deletes = key.int("deletes") ?? 0, expires = key.int("expires") ?? 0
            #expect(counted == puts + deletes + expires, "\(name)")
        }
        #expect(html.utf8.count < 400_000, "\(html.utf8.count) bytes for 40 keys")
    }
}

/// The test's own spelling of a key as the page shows it (`\n`, `\u{1b}`, `\\`), independent of the tool's.
enum EventPrinterForm {
    static func display(_ key: String) -> String {
        var out = ""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "\\": out += "\\\\"
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    out += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
