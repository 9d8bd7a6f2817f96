import Foundation
import TestSupport
import LoopbackHTTP
import Testing

/// A save that fails never reads as "cached": the items are printed, stderr says why they were not
/// cached, `--format json` says `"cached": false`, and the exit code is 1.
@Suite("cachelog load: honest save", .hangGuard)
struct HonestSaveTests {
    /// Longer than LMDB's maximum key size (511 bytes): the append is refused.
    static let tooLongKey = String(repeating: "k", count: 600)

    @Test
    func load_reportsNotCachedAndExits1WhenSaveFails_keyLongerThanTheDatabaseAllows() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.cachelog(
            "--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", Self.tooLongKey, "--contract", "films")

        #expect(result.status == ExitCode.failure, "\(result)")
        #expect(result.stdoutLines == [
            "\(Self.tooLongKey): 2 items from remote, loaded 2026-12-01T10:00:00Z, not saved to the cache",
            "  Castle in the Sky",
            "  My Neighbor Totoro",
        ])
        #expect(!result.stdout.contains("cached"), "the report must not say cached: \(result.stdout)")
        #expect(result.stderrLines == ["cachelog: the items were loaded from the remote but not cached: key is 600 bytes; the maximum is 511"])

        // No database can hold the key: nothing was appended, and nothing was created either.
        #expect(!FileManager.default.fileExists(atPath: sandbox.db), "a save that could never land created a database")
    }

    @Test
    func load_json_saysCachedFalse_andExits1WhenSaveFails() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.cachelog(
            "--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", Self.tooLongKey, "--contract", "films", "--format", "json")

        #expect(result.status == ExitCode.failure, "\(result)")
        let json = try result.json()
        #expect(json["cached"] as? Bool == false, "\(result.stdout)")
        #expect(json.string("source") == "remote")
        #expect((json["items"] as? [Any])?.count == 2)
        #expect(result.stderrLines.count == 1, "\(result.stderr)")
        #expect(result.stderrLines.first?.hasPrefix("cachelog: the items were loaded from the remote but not cached: ") == true)
    }

    @Test
    func load_json_saysCachedTrue_whenSaved_andWhenServedFromTheCache() async throws {
        let sandbox = try Sandbox()
        let online = try await sandbox.cachelog(
            "--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films", "--format", "json")
        #expect(online.status == ExitCode.ok, "\(online)")
        #expect(online.stderr.isEmpty)
        #expect(try online.json()["cached"] as? Bool == true)

        sandbox.server.setHandler { _ in .status(500) }
        let offline = try await sandbox.cachelog(
            "--now", Day.dec2, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films", "--format", "json")
        #expect(offline.status == ExitCode.ok, "\(offline)")
        let json = try offline.json()
        #expect(json.string("source") == "cache")
        #expect(json["cached"] as? Bool == true)
    }

    /// The disk fills up under `load`: writes past the database's current size fail (RLIMIT_FSIZE,
    /// with SIGXFSZ ignored, as `cachelog-writer --file-size-limit` does in the full-disk tests), the
    /// way they fail on a full disk.
    @Test
    func load_reportsNotCachedAndExits1WhenTheDiskIsFull_andTheOldCacheStillServes() async throws {
        // Random hex does not compress below half: far more than the file has room for, zeros
        // written ahead of its pages (256 KB) included.
        var generator = SystemRandomNumberGenerator()
        let bulky = (0..<1_000_000).map { _ in String(UInt8.random(in: 0...15, using: &generator), radix: 16) }.joined()
        let sandbox = try Sandbox(serving: LoopbackHTTPServer.routes(Feeds.routes.merging([
            "/bulky.json": .json(#"[{"title":"Bulky","description":"\#(bulky)"}]"#),
        ]) { _, new in new }))
        let saved = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        try #require(saved.status == ExitCode.ok, "\(saved)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: sandbox.db + "/data.mdb")[.size] as? Int)

        let full = try await sandbox.runWithFileSizeLimit(
            size, ["--db", sandbox.db, "--now", Day.dec2, "load", sandbox.url("/bulky.json"), "--key", "films", "--contract", "json"])

        #expect(full.status == ExitCode.failure, "\(full)")
        #expect(full.stdoutLines == ["films: 1 item from remote, loaded 2026-12-02T10:00:00Z, not saved to the cache", "  Bulky"])
        #expect(full.stderrLines.count == 1, "\(full.stderr)")
        #expect(full.stderrLines.first?.hasPrefix("cachelog: the items were loaded from the remote but not cached: ") == true, "\(full.stderr)")
        #expect(!looksLikeACrash(full.stderr))

        sandbox.server.setHandler { _ in .status(500) }
        let offline = try await sandbox.cachelog("--now", Day.dec3, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(offline.status == ExitCode.ok, "\(offline)")
        #expect(offline.stdoutLines.first == "films: 2 items from cache, cached 2026-12-01T10:00:00Z (age 2d)")
    }
}

extension Sandbox {
    /// Runs `cachelog arguments` where no file may grow past `bytes`, as `ulimit -f` in a user's
    /// shell sets it: SIGXFSZ keeps its default (kill the process), so this also checks that the
    /// tool ignores it and reports the write that fails with EFBIG.
    func runWithFileSizeLimit(_ bytes: Int, _ arguments: [String]) async throws -> CLIResult {
        // ulimit -f counts 1024-byte blocks in bash; LMDB's file is a whole number of pages.
        let result = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"), ["-c", #"ulimit -f "$1" && shift && exec "$@""#, "bash", String(bytes / 1024), executable.path] + arguments,
            environment: environment(), timeout: .seconds(30))
        #expect(!result.timedOut, "cachelog \(arguments.joined(separator: " ")) did not finish in time; killed")
        #expect(result.exited, "cachelog died of signal \(result.status)")
        return CLIResult(status: result.status, stdout: result.stdoutText, stderr: result.stderrText)
    }
}
