import Foundation
import LoopbackHTTP
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Paths an outside review took with the built binary alone: each gave a wrong answer, lost a
/// save or fooled the terminal before.
@Suite("cachelog: the outside review's paths", .hangGuard)
struct ReviewEdgeTests {
    @Test
    func aDatabaseThisUserCannotWrite_stillServesItsCache_andSaysWhatItCannotSave() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres").status == ExitCode.ok)
        for file in ["", "/data.mdb", "/lock.mdb"] {
            try FileManager.default.setAttributes([.posixPermissions: file.isEmpty ? 0o555 : 0o444], ofItemAtPath: sandbox.db + file)
        }
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: sandbox.db) }

        let cached = try await sandbox.runAsReader("--now", Day.dec2, "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres", "--format", "json")
        #expect(cached.status == ExitCode.ok && cached.stdout.contains(#""source":"cache""#), "a fresh cache serves: \(cached)")

        let remote = try await sandbox.runAsReader(
            "--now", Day.dec2, "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres", "--strategy", "remote-first", "--format", "json")
        #expect(remote.status == ExitCode.failure, "\(remote)")
        #expect(try remote.json()["cached"] as? Bool == false, "the items, said not cached: \(remote)")
        let denied = "\(sandbox.db) is not writable: this user may not write it (permission denied)"
        #expect(remote.stderrLines == ["cachelog: the items were loaded from the remote but not cached: \(denied)"], "\(remote)")

        let validate = try await sandbox.runAsReader("--now", Day.dec9, "validate")
        #expect(validate.status == ExitCode.failure && validate.stderrLines == ["cachelog: \(denied)"], "\(validate)")
    }

    /// Another user's database directory (0700) reads to this one as a directory it may not
    /// search: it is not "no database yet", which would make `remove` and `validate` say there
    /// is nothing to do and exit 0, and a load fetch past a cache it could not see.
    @Test
    func aDatabaseDirectoryThisUserMayNotRead_isSaidToBeUnreadable_byReadsAndWrites() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres").status == ExitCode.ok)
        let before = try Data(contentsOf: URL(fileURLWithPath: sandbox.db + "/data.mdb"))
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: sandbox.db)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: sandbox.db) }

        let unreadable = "cachelog: \(sandbox.db) is not readable by this user; reading needs read access to it"
        for arguments in [["state"], ["remove", "genres"], ["validate"], ["--now", Day.dec2, "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres", "--strategy", "cache-only"]] {
            let result = try await sandbox.runAsReader(arguments)
            #expect(result.status != ExitCode.ok && result.stderrLines == [unreadable], "\(arguments): \(result)")
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: sandbox.db)
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.db + "/data.mdb")) == before)
    }

    @Test
    func aFirstSaveWhoseKeyNoDatabaseCanHold_createsNoDatabase() async throws {
        let sandbox = try Sandbox()
        let load = try await sandbox.cachelog("load", sandbox.url("/genres.json"), "--key", String(repeating: "k", count: 512), "--contract", "genres")

        #expect(load.status == ExitCode.failure && load.stderr.contains("not cached"), "\(load)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.db))
    }

    @Test
    func controlCharactersInKeysItemsAndMessages_reachTheTerminalEscaped() async throws {
        let sandbox = try Sandbox(serving: LoopbackHTTPServer.routes([
            "/films.json": .json(#"[{"id":"2baf70d1-42bb-4437-b551-e5fed5a87abe","title":"F\u001b[2J\nX","description":"d","image":"https://i.example/1.png","url":"https://f.example/1"}]"#),
        ]))
        let key = "a\nb\u{1b}[2J"

        let load = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", key, "--contract", "films")
        let audit = try await sandbox.cachelog("--now", Day.dec2, "audit", "--key", key)
        let failure = try await sandbox.cachelog("--now", Day.dec2, "load", sandbox.url("/nope"), "--key", "x\ny", "--contract", "films")

        for result in [load, audit, failure] {
            #expect(!(result.stdout + result.stderr).contains("\u{1b}"), "\(result)")
        }
        #expect(load.stdoutLines == [#"a\nb\u{1b}[2J: 1 item from remote, cached 2026-12-01T10:00:00Z (age 0s)"#, #"  F\u{1b}[2J\nX"#], "\(load)")
        #expect(audit.stdoutLines.first == #"a\nb\u{1b}[2J"#, "\(audit)")
        #expect(failure.stderrLines.count == 1 && failure.stderr.contains(#"x\ny"#), "one failure, one line: \(failure)")
    }

    @Test
    func theDefaultDatabase_isUnderHOME() async throws {
        let sandbox = try Sandbox()
        let home = sandbox.path("home")
        var environment = sandbox.environment(["HOME": home])
        environment.removeValue(forKey: "XDG_CACHE_HOME")

        let result = try await ChildProcess.run(
            sandbox.executable, ["--now", Day.dec1, "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres"],
            environment: environment)

        #expect(result.status == ExitCode.ok, "\(result.stderrText)")
        #expect(FileManager.default.fileExists(atPath: home + "/.cache/cachelog/data.mdb"))
    }

    @Test
    func imageOutDash_writesToStdout_andOutOverTheDatabasesOwnFile_isRefused() async throws {
        let sandbox = try Sandbox(serving: LoopbackHTTPServer.routes(["/img.bin": HTTPResponse(status: 200, body: Data("image bytes".utf8))]))

        let dash = try await sandbox.cachelog("image", sandbox.url("/img.bin"), "--out", "-")
        #expect(dash.status == ExitCode.ok && dash.stdout == "image bytes", "\(dash)")
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/-"))

        let before = try Data(contentsOf: URL(fileURLWithPath: sandbox.db + "/data.mdb"))
        let overTheDatabase = try await sandbox.cachelog("image", sandbox.url("/img.bin"), "--out", sandbox.db + "/data.mdb")
        #expect(overTheDatabase.status == ExitCode.usage, "\(overTheDatabase)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.db + "/data.mdb")) == before)
    }

    @Test
    func aPageThatNamesItselfAsTheNext_endsTheSearch() async throws {
        let sandbox = try Sandbox()
        let first = sandbox.url("/people-sky.json")
        sandbox.server.setHandler(LoopbackHTTPServer.routes([
            "/people-sky.json": .json(#"{"count":2,"next":"\#(sandbox.url("/people-sky-2.json"))","previous":null,"results":[{"name":"Luke"}]}"#),
            "/people-sky-2.json": .json(#"{"count":2,"next":"\#(sandbox.url("/people-sky-2.json"))","previous":"\#(first)","results":[{"name":"Leia"}]}"#),
        ]))
        let template = sandbox.url("/people-{query}.json")
        #expect(try await sandbox.cachelog("load", template, "--contract", "people", "--query", "sky").status == ExitCode.ok)

        var counts: [Int] = []
        for _ in 0..<3 {
            let more = try await sandbox.cachelog("load", template, "--contract", "people", "--query", "sky", "--more", "--format", "json")
            counts.append((try more.json()["items"] as? [Any])?.count ?? -1)
        }

        #expect(counts == [2, 2, 2], "the second page is the last: \(counts)")
    }

    @Test
    func validate_ofAStateRowNamingNoRecord_deletesIt_andSaysSoTruly() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres").status == ExitCode.ok)
        try await Planting(db: sandbox.db).python("""
            txn.put(b"ghost:1", struct.pack(">QdIQ", 0xFFFFFFF0, 1776038400.0, 10, 0xFFFFFFF0), db=state)
            """)

        let validated = try await sandbox.cachelog("--now", Day.dec2, "validate", "--format", "json")
        let replay = try await sandbox.cachelog("replay", "--key", "ghost:1", "--format", "jsonl")
        let verify = try await sandbox.cachelog("verify")

        #expect(try validated.jsonArray().map { $0.string("outcome") } == ["fresh", "deleted"], "\(validated)")
        #expect(try replay.jsonLines().map { $0.string("reason") } == ["retrieval-error"], "the delete it reports is in the log: \(replay)")
        #expect(verify.status == ExitCode.ok, "\(verify)")
    }

    @Test
    func validate_afterABitFlipMovesAStateRowToAnotherKeysPut_deletesNothing() async throws {
        let sandbox = try Sandbox()
        for (key, contract) in [("films", "films"), ("b", "json"), ("a", "genres")] {
            let url = sandbox.url(contract == "films" ? "/films.json" : "/genres.json")
            #expect(try await sandbox.cachelog("--now", Day.dec1, "load", url, "--key", key, "--contract", contract).status == ExitCode.ok)
        }
        // films' row names seq 2 (bytes 1 to 8, after the row's version); flipped, it names seq 6, the genres put of key a.
        try await Planting(db: sandbox.db).python("""
            row = bytearray(txn.get(b"films", db=state))
            row[8] ^= 4
            txn.put(b"films", bytes(row), db=state)
            """)

        let validated = try await sandbox.cachelog("--now", Day.dec2, "validate", "--format", "json")

        #expect(try validated.jsonArray().map { $0.string("outcome") } == ["fresh", "fresh", "fresh"], "\(validated)")
    }

    /// Valid JSON nested deeper than the scanner goes is refused saying so: "the body is not
    /// JSON" sent the user to look for a broken server.
    @Test
    func aBodyNestedDeeperThanTheLimit_isRefusedSayingSo() async throws {
        let deep = String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)
        let sandbox = try Sandbox(serving: LoopbackHTTPServer.routes(["/deep.json": .json(deep)]))

        let load = try await sandbox.cachelog("load", sandbox.url("/deep.json"), "--key", "deep", "--contract", "json")

        #expect(load.status == ExitCode.noUsableData, "\(load)")
        #expect(load.stderrLines == ["cachelog: no usable data for deep: remote sent invalid data: the body nests arrays and objects deeper than 512 levels; no cache"],
                "\(load)")
    }

}
