import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// What a person meets first: help, mistakes on the command line, global options, the
/// environment, colours, and the demo.
@Suite("cachelog usage", .hangGuard)
struct UsageTests {
    static let commands = ["load", "image", "searches", "replay", "state", "audit", "report", "validate", "stats", "verify", "rebuild", "compact", "demo"]
    static let readOnlyCommands = ["replay", "state", "stats", "verify", "audit"]

    // MARK: help

    @Test(arguments: [""] + commands)
    func help_forEveryCommand_exitsZero_andShowsAnExample(command: String) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(command.isEmpty ? ["--help"] : [command, "--help"])
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stdout.contains("Example"), "\(result)")
        #expect(result.stdout.contains("USAGE: cachelog"))
        #expect(!result.stdout.contains(escape))
    }

    /// On a narrow terminal an example wraps, and its continuation stays indented under it
    /// instead of starting at the left margin, where it would read as prose.
    @Test
    func helpWithACommandName_showsThatCommandsHelp() async throws {
        let sandbox = try Sandbox()
        for arguments in [["help", "state"], ["--db", "help", "help", "state"], ["help", "help"]] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == ExitCode.ok, "\(arguments): \(result)")
            #expect(result.stdout.hasPrefix("OVERVIEW: Show"), "\(arguments): \(result)")
        }
    }

    @Test(arguments: [""] + commands)
    func help_onANarrowTerminal_wrapsExamplesWithTheirIndentation(command: String) async throws {
        let sandbox = try Sandbox()
        let arguments = command.isEmpty ? ["--help"] : [command, "--help"]
        let result = try await sandbox.run(arguments, environment: ["COLUMNS": "50"])
        #expect(result.status == ExitCode.ok, "\(result)")
        let lines = result.stdoutLines
        guard let examples = lines.firstIndex(where: { $0.hasPrefix("Example") }) else {
            Issue.record("no examples: \(result)"); return
        }
        let block = lines[(examples + 1)...].prefix { !$0.isEmpty }
        #expect(!block.isEmpty, "\(result)")
        for line in block {
            // A word too long for any line (a URL) is cut, so every line fits and keeps its indentation.
            #expect(line.hasPrefix("  "), "an example line lost its indentation: \(line.debugDescription)\n\(result)")
            #expect(line.count < 50, "\(line.debugDescription)")
        }
        // The continuations are indented deeper than the example they continue.
        #expect(block.contains { $0.hasPrefix("      ") } || block.allSatisfy { $0.count < 48 }, "\(block)")
    }

    /// swift-argument-parser traps when the width leaves no room beside its indentation; the tool
    /// wraps help to at least 40 columns instead.
    @Test(arguments: ["0", "-5", "1", "26", "39", "abc"])
    func help_onAnAbsurdlyNarrowWidth_isStillHelp_notASignal(columns: String) async throws {
        let sandbox = try Sandbox()
        for arguments in [["--help"], ["report", "--help"], ["load", "--help"], ["help", "load"]] {
            let result = try await sandbox.run(arguments, environment: ["COLUMNS": columns])
            #expect(result.status == ExitCode.ok, "COLUMNS=\(columns) \(arguments): \(result)")
            #expect(result.stdout.contains("USAGE: cachelog"), "COLUMNS=\(columns) \(arguments): \(result)")
        }
    }

    @Test
    func help_root_documentsTheExitCodesAndListsEveryCommand() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["--help"])
        // Wrapped at 80 columns, as the help is printed here.
        let exitCodes = result.stdout.replacingOccurrences(of: "\n", with: " ")
        #expect(exitCodes.contains("Exit codes: 0 ok, 1 failure, 3 no usable data (load, image), 64 usage, 75 busy"), "\(result.stdout)")
        #expect(exitCodes.contains("128 + the signal when interrupted by SIGHUP, SIGINT, SIGQUIT or SIGTERM (129, 130, 131, 143"), "\(result.stdout)")
        for command in Self.commands { #expect(result.stdout.contains("  \(command) ")) }
    }

    // MARK: bad input

    static let usageErrors: [(name: String, arguments: [String], says: String)] = [
        ("unknown flag", ["replay", "--bogus"], "--bogus"),
        ("unknown flag before the command", ["--bogus", "replay"], "--bogus"),
        ("unknown command", ["frobnicate"], "frobnicate"),
        ("bad date", ["replay", "--from", "yesterday"], "yesterday"),
        ("bad --now", ["--now", "next friday", "state"], "next friday"),
        ("bad --as-of", ["state", "--as-of", "2026-13-45"], "2026-13-45"),
        ("bad duration", ["audit", "--max-age", "7x"], "7x"),
        ("zero duration", ["validate", "--max-age", "0d"], "0d"),
        ("bad type", ["replay", "--type", "update"], "update"),
        ("negative limit", ["replay", "--limit", "-1"], "--limit"),
        ("bad format", ["stats", "--format", "yaml"], "yaml"),
        ("missing URL", ["load", "--key", "films"], "<url>"),
        ("missing key", ["load", "http://127.0.0.1:9/films.json"], "--key"),
        ("non-http URL", ["load", "ftp://127.0.0.1/films.json", "--key", "films"], "ftp://127.0.0.1/films.json"),
        ("file URL", ["load", "file:///etc/hostname", "--key", "films"], "file:///etc/hostname"),
        ("not a URL", ["load", "films.json", "--key", "films"], "films.json"),
        ("port out of range", ["load", "http://127.0.0.1:99999/films.json", "--key", "films"], "99999"),
        ("image port out of range", ["image", "http://127.0.0.1:0/poster.jpg"], ":0/poster.jpg"),
        ("retries out of range", ["load", "http://127.0.0.1:9/films.json", "--key", "films", "--retries", "99"], "--retries"),
        ("missing --before", ["compact"], "--before"),
    ]

    @Test(arguments: usageErrors)
    func badInput_exits64_withAnErrorLineNamingTheProblem_andNoStackTrace(name: String, arguments: [String], says: String) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["--db", sandbox.db] + arguments)
        #expect(result.status == ExitCode.usage, "\(name): \(result)")
        #expect(result.stdout.isEmpty, "\(name)")
        let error = try #require(result.stderrLines.first, "\(name): nothing on stderr")
        #expect(error.hasPrefix("cachelog: "), "\(name): \(error)")
        #expect(error.contains(says), "\(name): \(error)")
        #expect(!looksLikeACrash(result.stderr), "\(name): \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.db), "\(name) created the database")
        #expect(sandbox.server.requestCount == 0)
    }

    @Test
    func aValueHoldingALineBreak_isNamedEscaped_inTheOneErrorLine() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["--db", sandbox.db, "retention", "--history", "7d\n"])
        #expect(result.status == ExitCode.usage, "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
        let line = try #require(result.stderrLines.first)
        #expect(line.contains("'7d\\n'") && line.hasSuffix("(see 'cachelog retention --help')"), "\(line)")
    }

    @Test
    func badNowInTheEnvironment_exits64_namingTheVariable() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["--db", sandbox.db, "state"], environment: ["CACHELOG_NOW": "tomorrow"])
        #expect(result.status == ExitCode.usage, "\(result)")
        #expect(result.stderrLines.first?.contains("CACHELOG_NOW") == true, "\(result)")
        #expect(result.stderrLines.first?.contains("tomorrow") == true, "\(result)")
    }

    @Test(arguments: commands.filter { $0 != "demo" })
    func dbPathThatIsARegularFile_exitsOne_withOneLine(command: String) async throws {
        let sandbox = try Sandbox()
        let file = sandbox.path("not-a-database")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: file))
        var arguments = ["--db", file, command]
        switch command {
        case "load": arguments += [sandbox.url("/films.json"), "--key", "films", "--contract", "films"]
        case "image": arguments += [sandbox.url("/films.json"), "--format", "json"]
        case "compact": arguments += ["--before", "1"]
        default: break
        }
        let result = try await sandbox.run(arguments)
        #expect(result.status == ExitCode.failure, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines == ["cachelog: \(file) is a file, not a database directory"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("hello".utf8))
    }

    @Test(arguments: readOnlyCommands)
    func readOnlyCommand_onAMissingDatabase_exitsOne_withOneLine_andCreatesNothing(command: String) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["--db", sandbox.db, command])
        #expect(result.status == ExitCode.failure, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines == ["cachelog: no CacheLog database at \(sandbox.db)"])
        #expect(!FileManager.default.fileExists(atPath: sandbox.db))
    }

    @Test
    func readOnlyCommand_withoutDbOrEnvironment_usesTheXDGCacheHome_andCreatesNothing() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["state"])
        #expect(result.status == ExitCode.failure, "\(result)")
        #expect(result.stderrLines == ["cachelog: no CacheLog database at \(sandbox.path("xdg-cache"))/cachelog"])
        // Nothing at the default database path (Foundation's URL cache may create its own folder).
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("xdg-cache") + "/cachelog"))
    }

    // MARK: global options and the environment

    @Test
    func globalOptions_workBeforeAndAfterTheCommandName_andWithEquals() async throws {
        let sandbox = try Sandbox()
        let feed = sandbox.url("/films.json")
        let before = try await sandbox.run(["--db", sandbox.db, "--now", Day.dec1, "load", feed, "--key", "films", "--contract", "films", "--format", "json"])
        #expect(before.status == ExitCode.ok, "\(before)")
        #expect(try before.json().string("timestamp") == Day.dec1)

        let after = try await sandbox.run(["load", feed, "--key", "genres", "--contract", "films", "--db", sandbox.db, "--now", Day.dec2, "--format", "json"])
        #expect(after.status == ExitCode.ok, "\(after)")
        #expect(try after.json().string("timestamp") == Day.dec2)

        let mixed = try await sandbox.run(["--now=\(Day.dec3)", "-v", "state", "--db=\(sandbox.db)", "--format", "json"])
        #expect(mixed.status == ExitCode.ok, "\(mixed)")
        #expect((try mixed.json()["entries"] as? [[String: Any]])?.count == 2)

        let replay = try await sandbox.run(["replay", "--format", "jsonl", "--db", sandbox.db])
        #expect(try replay.jsonLines().compactMap { $0.string("at") } == [Day.dec1, Day.dec1, Day.dec2, Day.dec2])
        let replayBefore = try await sandbox.run(["--db", sandbox.db, "replay", "--format", "jsonl"])
        #expect(replayBefore.stdout == replay.stdout)
    }

    @Test
    func environment_CACHELOG_DBAndCACHELOG_NOW_areTheDefaults_andOptionsWin() async throws {
        let sandbox = try Sandbox()
        let environment = ["CACHELOG_DB": sandbox.db, "CACHELOG_NOW": Day.dec1]
        let load = try await sandbox.run(["load", sandbox.url("/films.json"), "--key", "films", "--contract", "films", "--format", "json"], environment: environment)
        #expect(load.status == ExitCode.ok, "\(load)")
        #expect(try load.json().string("timestamp") == Day.dec1)
        #expect(FileManager.default.fileExists(atPath: sandbox.db + "/data.mdb"))

        // CACHELOG_NOW is the clock: eight days on, validation expires the cache.
        let validate = try await sandbox.run(["validate"], environment: ["CACHELOG_DB": sandbox.db, "CACHELOG_NOW": Day.dec9])
        #expect(validate.stdout.hasPrefix("films: expired (cached 2026-12-01T10:00:00Z, 8d old"), "\(validate)")

        // --now and --db win over the environment.
        let other = sandbox.path("other-db")
        let override = try await sandbox.run(
            ["--db", other, "--now", Day.dec3, "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres", "--format", "json"],
            environment: environment)
        #expect(try override.json().string("timestamp") == Day.dec3)
        let replay = try await sandbox.run(["replay", "--format", "jsonl"], environment: environment)
        #expect(try replay.jsonLines().compactMap { $0.string("key") } == ["films", "films", "films"])
        let otherReplay = try await sandbox.run(["replay", "--format", "jsonl"], environment: ["CACHELOG_DB": other])
        #expect(try otherReplay.jsonLines().compactMap { $0.string("key") } == ["genres", "genres"])
    }

    // MARK: JSON everywhere it is offered

    @Test
    func everyJSONOutput_parses() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        _ = try await sandbox.cachelog("--now", Day.dec10, "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres")
        for arguments in [
            ["load", sandbox.url("/films.json"), "--key", "films", "--contract", "films", "--format", "json"],
            ["state", "--format", "json"], ["state", "--as-of", "3", "--format", "json"],
            ["audit", "--format", "json"], ["validate", "--format", "json"], ["stats", "--format", "json"],
            ["verify", "--format", "json"],
        ] {
            let result = try await sandbox.run(["--db", sandbox.db, "--now", Day.dec10] + arguments)
            #expect(result.status == ExitCode.ok, "\(arguments): \(result)")
            #expect(result.stdoutLines.count == 1, "\(arguments): \(result)")
            #expect((try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) != nil, "\(arguments): \(result.stdout)")
        }
        let replay = try await sandbox.cachelog("replay", "--format", "jsonl", "--payload")
        #expect(try replay.jsonLines().count == 12)
    }

    // MARK: colour

    @Test
    func nonTerminalStdout_getsNoEscapeCodes_fromAnyCommand() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        for arguments in [["replay"], ["replay", "--payload"], ["state", "--as-of", "6"], ["audit"], ["stats"], ["verify"], ["validate"]] {
            let result = try await sandbox.run(["--db", sandbox.db] + arguments)
            #expect(result.status == ExitCode.ok, "\(arguments): \(result)")
            #expect(!result.stdout.contains(escape), "\(arguments)")
            #expect(!result.stderr.contains(escape), "\(arguments)")
        }
    }

    @Test
    func terminalStdout_isColoured_butNeverWithNO_COLOR() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let coloured = try await runOnTerminal(sandbox, ["--db", sandbox.db, "replay"])
        #expect(coloured.contains("\(escape)["), "a terminal gets colour: \(coloured)")
        #expect(coloured.contains("expire"))

        let plain = try await runOnTerminal(sandbox, ["--db", sandbox.db, "replay"], environment: ["NO_COLOR": "1"])
        #expect(!plain.contains(escape), "NO_COLOR: \(plain)")
        #expect(plain.contains("expire"))
    }

    @Test
    func progressLines_onATerminal_butNeverWithNO_COLOR_orTERMdumb() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let shown = try await runOnTerminal(sandbox, ["--db", sandbox.db, "verify"], environment: ["TERM": "xterm"], stderrToo: true)
        #expect(shown.contains("\(escape)[2K"), "a terminal gets progress: \(shown)")
        for environment in [["NO_COLOR": "1"], ["TERM": "dumb"]] {
            let plain = try await runOnTerminal(sandbox, ["--db", sandbox.db, "verify"], environment: environment, stderrToo: true)
            #expect(!plain.contains(escape), "\(environment): \(plain)")
            #expect(plain.contains("no problems"), "\(environment): \(plain)")
        }
    }

    // MARK: demo

    @Test
    func demo_exitsZero_andTellsTheStory() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["demo"])
        #expect(result.status == ExitCode.ok, "\(result)")
        let out = result.stdout
        #expect(out.contains("1. Online on 2026-12-01: the feed loads from the server and is cached."))
        #expect(out.contains("films: 3 items from remote, cached 2026-12-01T10:00:00Z (age 0s)"))
        #expect(out.contains("films: 3 items from cache, cached 2026-12-01T10:00:00Z (age 2d)"))
        #expect(out.contains("(exit 3)"))
        #expect(out.contains("films: expired (cached 2026-12-01T10:00:00Z, 8d old, max age 7d; expired at seq 3)"))
        #expect(out.contains("     3  2026-12-09T10:00:00Z  expire   films"))
        #expect(out.contains("as of seq 2: 1 live entry"))
        #expect(out.contains("as of seq 3: 0 live entries"))
        #expect(out.contains("became stale (max age 7d)"))
        #expect(out.contains("Done; the demo database was removed."))
        #expect(!out.contains(escape))
        // The one failure of the story is the expected exit 3, reported on stderr as one line.
        #expect(result.stderrLines == [
            "cachelog: no usable data for films: remote sent invalid data: HTTP status 500, not 200; cache expired (cached 2026-12-01T10:00:00Z, 8d old, max age 7d)",
        ])
        // Nothing at the default database path (Foundation's URL cache may create its own folder).
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("xdg-cache") + "/cachelog"))
    }

    @Test
    func demo_ignoresTheCallersClockAndDatabase() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["demo"], environment: ["CACHELOG_NOW": "2030-01-01T00:00:00Z", "CACHELOG_DB": sandbox.db])
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stdout.contains("films: 3 items from remote, cached 2026-12-01T10:00:00Z (age 0s)"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.db))
    }
}

/// A usage error is one line on stderr, as the README promises: what is wrong, and where help is.
@Suite("One-line usage errors", .hangGuard)
struct OneLineUsageTests {
    @Test(arguments: [
        (["--bogus"], "cachelog: Unknown option '--bogus' (see 'cachelog --help')"),
        (["nosuch"], "cachelog: Unexpected argument 'nosuch' (see 'cachelog --help')"),
        (["state", "--as-of"], "cachelog: Missing value for '--as-of <seq|date|duration>' (see 'cachelog state --help')"),
        // It printed the main help and exited 0, as if asked for it.
        (["help", "bogus"], "cachelog: help: 'bogus' is not a command (see 'cachelog --help')"),
        (["--format", "json", "help", "bogus"], "cachelog: help: 'bogus' is not a command (see 'cachelog --help')"),
    ])
    func aUsageError_isOneLineOnStderr_exit64(arguments: [String], line: String) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["--db", sandbox.db] + arguments)
        #expect(result.status == ExitCode.usage, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines == [line], "\(result)")
    }

    @Test
    func aNegativeNumber_isTakenAsTheValue_notAMissingOne() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.cachelog("replay", "--limit", "-1")
        #expect(result.status == ExitCode.usage, "\(result)")
        #expect(result.stderrLines == ["cachelog: --limit must not be negative (see 'cachelog replay --help')"], "\(result)")
    }

    @Test
    func aBadValue_isOneLine_thatSaysWhatToWrite() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.cachelog("validate", "--max-age", "1.5d")
        #expect(result.status == ExitCode.usage, "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stderrLines.first?.hasSuffix("write 36h; units are s, m, h, d and w (see 'cachelog validate --help')") == true, "\(result)")
    }

    @Test
    func helpAndVersion_stillGoToStdout_exit0() async throws {
        let sandbox = try Sandbox()
        for arguments in [["--help"], ["state", "--help"], ["help", "state"], ["--version"]] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == ExitCode.ok, "\(arguments): \(result)")
            #expect(!result.stdout.isEmpty && result.stderr.isEmpty, "\(arguments): \(result)")
        }
    }
}
