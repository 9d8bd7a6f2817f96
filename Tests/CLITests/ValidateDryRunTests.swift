import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `validate --dry-run` answers "what would expire on Friday?" without writing anything.
@Suite("cachelog validate --dry-run", .hangGuard)
struct ValidateDryRunTests {
    @Test
    func dryRun_printsWhatWouldExpire_andWritesNothing_evenWithAFutureNow() async throws {
        let sandbox = try Sandbox()
        for (key, contract) in [("films", "films"), ("genres", "genres")] {
            let loaded = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/\(contract).json"), "--key", key, "--contract", contract)
            try #require(loaded.status == ExitCode.ok, "\(loaded)")
        }
        let data = sandbox.db + "/data.mdb"
        let before = try Data(contentsOf: URL(fileURLWithPath: data))

        let text = try await sandbox.cachelog("--now", "2030-01-01T00:00:00Z", "validate", "--dry-run")
        #expect(text.status == ExitCode.ok, "\(text)")
        #expect(text.stdoutLines.count == 2)
        #expect(text.stdoutLines.allSatisfy { $0.contains(": would expire (") && $0.hasSuffix("; nothing written)") }, "\(text)")

        let json = try await sandbox.cachelog("--now", "2030-01-01T00:00:00Z", "validate", "--dry-run", "--format", "json")
        #expect(try json.jsonArray().map { "\($0.string("key") ?? "?") \($0.string("outcome") ?? "?") \($0["dryRun"] as? Bool ?? false)" }
            == ["films expired true", "genres expired true"])

        #expect(try Data(contentsOf: URL(fileURLWithPath: data)) == before, "a dry run changed the database file")
        // Recorded time was not pushed into 2030: the next real event is stamped by its own clock.
        let later = try await sandbox.cachelog("--now", Day.dec2, "validate", "--format", "json")
        #expect(try later.jsonArray().map { $0.string("outcome") } == ["fresh", "fresh"])
        let replay = try await sandbox.cachelog("replay", "--format", "jsonl")
        #expect(try replay.jsonLines().count == 4, "\(replay)")
    }

    /// "Even on a database it may not write": the README's promise, for a reader whose files are
    /// read-only to it (another user's database, or its own made read-only). LMDB would write
    /// `lock.mdb` even to read; the tool reads without it, and answers as the owner's tool does.
    @Test
    func dryRunAndState_onADatabaseThisUserMayNotWrite_answerAsForItsOwner_andWriteNothing() async throws {
        let sandbox = try Sandbox()
        for (key, contract) in [("films", "films"), ("genres", "genres")] {
            let loaded = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/\(contract).json"), "--key", key, "--contract", contract)
            try #require(loaded.status == ExitCode.ok, "\(loaded)")
        }
        let later = "2026-12-09T09:00:00Z"
        let ownersDryRun = try await sandbox.cachelog("--now", later, "validate", "--dry-run")
        let ownersState = try await sandbox.cachelog("--now", later, "state")
        let files = [sandbox.db + "/data.mdb", sandbox.db + "/lock.mdb"]
        for file in files { try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: file) }
        let before = try files.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }

        let dryRun = try await sandbox.runAsReader("--now", later, "validate", "--dry-run")
        #expect(dryRun.status == ExitCode.ok && dryRun.stderr.isEmpty, "\(dryRun)")
        #expect(dryRun.stdout == ownersDryRun.stdout && dryRun.stdoutLines.count == 2, "\(dryRun)")
        let state = try await sandbox.runAsReader("--now", later, "state")
        #expect(state.status == ExitCode.ok && state.stdout == ownersState.stdout, "\(state)")

        // A real validation has to write: one line says it cannot, and nothing is written.
        let validate = try await sandbox.runAsReader("--now", later, "validate")
        #expect(validate.status == ExitCode.failure && validate.stderrLines == ["cachelog: \(sandbox.db) is not writable: this user may not write it (permission denied)"], "\(validate)")
        #expect(try files.map { try Data(contentsOf: URL(fileURLWithPath: $0)) } == before, "a reader changed the database's files")

        // Without read access to the data, it says that, not "not writable".
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: files[0])
        let unreadable = try await sandbox.runAsReader("state")
        #expect(unreadable.status == ExitCode.failure, "\(unreadable)")
        #expect(unreadable.stderrLines == ["cachelog: \(sandbox.db)/data.mdb is not readable by this user; reading needs read access to it"], "\(unreadable)")
    }

    /// A reader who may not write the lock file reads while another process keeps committing:
    /// it reads a copy of one commit, made again when two commits overlapped the copying, so
    /// `verify` answers (0) or says the database was busy (75), never the code of a corrupt
    /// database (1). It said "try again" with exit 1 in half of such runs once, and later, reading
    /// the live file, died of SIGABRT on liblmdb's assertions in 16 of 20.
    @Test(.enabled(if: geteuid() == 0, "a reader that file modes bind is root without its overriding capabilities"))
    func verify_byAReaderWithoutTheLockFile_whileAnotherProcessWrites_answersOrSaysBusy_neverCorrupt() async throws {
        let sandbox = try Sandbox()
        let loaded = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        try #require(loaded.status == ExitCode.ok, "\(loaded)")
        for file in ["data.mdb", "lock.mdb"] {
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: sandbox.db + "/" + file)
        }
        // Root keeps writing (file modes do not bind it): a commit every few milliseconds.
        let writer = try ChildProcess(try builtProduct("cachelog-writer"), [sandbox.db, "1000000", "--unsynced", "--delay-ms", "2"])
        defer { writer.send(SIGKILL) }
        let writing = try await eventually(timeout: .seconds(300)) { (try? Data(contentsOf: writer.stdoutFile))?.isEmpty == false }
        try #require(writing, "the writer never committed")

        var statuses: [Int32] = []
        for _ in 0..<20 {
            let verified = try await sandbox.runAsReader("verify")
            statuses.append(verified.status)
            #expect([ExitCode.ok, 75].contains(verified.status), "\(verified)")
            if verified.status == 75 {
                #expect(verified.stderrLines.count == 1 && verified.stderr.contains("busy"), "\(verified)")
            }
        }
        #expect(writer.isRunning, "the writer stopped before the reads were done")
        #expect(statuses.contains(ExitCode.ok), "no read found a quiet moment: \(statuses)")
    }

}
