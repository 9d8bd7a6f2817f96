import Foundation
import TestSupport
import Testing

/// `cachelog remove`: an explicit delete of what is cached, driven as a script would.
@Suite("cachelog remove", .hangGuard)
struct RemoveTests {
    /// The keys the state table holds, read by Python's lmdb module: an oracle the tool does not share.
    private func liveKeys(_ db: String) async throws -> [String] {
        let script = """
            import lmdb, sys
            env = lmdb.open(sys.argv[1], max_dbs=8, readonly=True, lock=False)
            with env.begin() as txn:
                for key, _ in txn.cursor(db=env.open_db(b'state', txn=txn)):
                    print(key.decode())
            """
        let result = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, db])
        try #require(result.exited && result.status == 0, "\(result.stderrText)")
        return result.stdoutText.split(separator: "\n").map(String.init)
    }

    private func loaded(_ sandbox: Sandbox) async throws {
        for (key, contract) in [("films", "films"), ("genres", "genres")] {
            let loaded = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/\(contract).json"), "--key", key, "--contract", contract)
            try #require(loaded.status == ExitCode.ok, "\(loaded)")
        }
    }

    @Test func remove_deletesWhatIsCached_withTheReasonExplicit_andSaysWhatHadNothing() async throws {
        let sandbox = try Sandbox()
        try await loaded(sandbox)

        let removed = try await sandbox.cachelog("--now", Day.dec2, "remove", "films", "absent")

        #expect(removed.status == ExitCode.ok, "\(removed)")
        #expect(removed.stdoutLines == ["removed films", "absent: nothing cached"])
        #expect(removed.stderr.isEmpty)
        #expect(try await liveKeys(sandbox.db) == ["genres"])
        let replay = try await sandbox.cachelog("replay", "--format", "jsonl", "--key", "films")
        let last = try #require(try replay.jsonLines().last)
        #expect(last.string("type") == "delete" && last.string("reason") == "explicit", "\(replay)")
        // A second removal finds nothing, records nothing.
        let again = try await sandbox.cachelog("--now", Day.dec2, "remove", "films", "--format", "json")
        #expect(again.status == ExitCode.ok)
        #expect(try again.json()["removed"] as? [String] == [] && again.json()["notCached"] as? [String] == ["films"])
        #expect(try await sandbox.cachelog("replay", "--format", "jsonl").jsonLines().count == 5)
    }

    @Test func removeAll_deletesEveryLiveKey_inOneCommit_andPipesIntoJq() async throws {
        let sandbox = try Sandbox()
        try await loaded(sandbox)

        let all = try await sandbox.cachelog("--now", Day.dec2, "remove", "--all", "--format", "json")

        #expect(all.status == ExitCode.ok, "\(all)")
        #expect(try Set(all.json()["removed"] as? [String] ?? []) == ["films", "genres"])
        #expect(try await liveKeys(sandbox.db).isEmpty)
        let empty = try await sandbox.cachelog("remove", "--all")
        #expect(empty.status == ExitCode.ok && empty.stdoutLines == ["no live cache entries"], "\(empty)")
    }

    @Test func remove_withoutKeys_orAnEmptyOrOverlongKey_orKeysAndAll_isAUsageError_andWritesNothing() async throws {
        let sandbox = try Sandbox()
        try await loaded(sandbox)
        let before = try Data(contentsOf: URL(fileURLWithPath: sandbox.db + "/data.mdb"))

        for arguments in [["remove"], ["remove", ""], ["remove", String(repeating: "k", count: 512)], ["remove", "--all", "films"]] {
            let result = try await sandbox.run(["--db", sandbox.db] + arguments)
            #expect(result.status == ExitCode.usage, "\(arguments.map { $0.prefix(20) }): \(result)")
            #expect(result.stdout.isEmpty && result.stderrLines.count == 1, "\(result)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.db + "/data.mdb")) == before)
    }

    @Test func remove_onNoDatabase_createsNothing() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.cachelog("remove", "films")
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stdoutLines == ["nothing to remove: no database at \(sandbox.db) yet"])
        #expect(!FileManager.default.fileExists(atPath: sandbox.db))
    }
}
