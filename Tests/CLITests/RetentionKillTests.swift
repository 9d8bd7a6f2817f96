import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `verify` tells damage from work in progress: beside a retention pass another process runs,
/// and after a kill at any moment of one, on a 10^5-record database, it is clean; a byte planted
/// afterwards is still named. Through the built binaries, as a cron job beside an app would run it.
@Suite("cachelog verify beside retention and after killing it", .hangGuard)
struct RetentionKillTests {
    /// 100,000 records of history over 300 keys, written once and copied for each round.
    private func original() async throws -> Sandbox {
        let sandbox = try Sandbox()
        let writer = try await ChildProcess.run(try builtProduct("cachelog-writer"), [
            sandbox.db, "100000", "--history", "--keys", "300", "--days", "60", "--start", "2026-09-01T00:00:00Z", "--seed", "8",
        ])
        try #require(writer.exited && writer.status == 0, "\(writer.stderrText)")
        return sandbox
    }

    private func copy(of original: Sandbox) throws -> Sandbox {
        let copy = try Sandbox()
        try FileManager.default.createDirectory(atPath: copy.db, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: original.db + "/data.mdb", toPath: copy.db + "/data.mdb")
        return copy
    }

    /// `retention --history 1d --apply` in a process of its own, at a clock long past the history.
    private func pass(_ sandbox: Sandbox) throws -> ChildProcess {
        try ChildProcess(sandbox.executable, ["--db", sandbox.db, "--now", "2026-12-01T00:00:00Z", "retention", "--history", "1d", "--apply"],
                         environment: sandbox.environment())
    }

    /// Whether `retention` shows a pass that has not finished.
    private func passUnderWay(_ sandbox: Sandbox) async throws -> Bool {
        let status = try await sandbox.cachelog("retention", "--format", "json")
        return ((try? status.json()["lastPass"] as? [String: Any])??["finished"] as? Bool) == false
    }

    @Test func verify_isCleanBesideAPass_andAfterTwentyKills_andStillNamesAPlantedFlip() async throws {
        let original = try await original()

        // Beside a pass another process runs, as many times as it lasts.
        let beside = try copy(of: original)
        let running = try pass(beside)
        var checks = 0
        repeat {
            let verify = try await beside.cachelog("verify")
            #expect(verify.status == ExitCode.ok, "verify beside a running pass: \(verify)")
            checks += 1
        } while running.isRunning && checks < 50
        let ran = await running.finish()
        #expect(ran.exited && ran.status == 0, "\(ran.stderrText)")

        // Killed at twenty moments of its pass: once it is seen under way, after 0 to 4 more looks.
        var midPass = 0
        for kill in 0..<20 {
            let sandbox = try copy(of: original)
            let child = try pass(sandbox)
            var looks = 0
            while child.isRunning {
                guard try await passUnderWay(sandbox) else { continue }
                looks += 1
                if looks > kill % 5 { break }
            }
            child.send(SIGKILL)
            let ended = await child.finish()
            if try await passUnderWay(sandbox) { midPass += 1 }

            let verify = try await sandbox.cachelog("verify")
            #expect(verify.status == ExitCode.ok, "kill \(kill) (\(ended.exited ? "it had ended" : "killed")): \(verify)")
        }
        #expect(midPass > 0, "no kill landed in the middle of a pass")

        // Real damage is still damage.
        let damaged = try copy(of: original)
        let seq: UInt64 = 50_000
        try await Planting(db: damaged.db).flipByte(ofRecord: seq, offsetFromEnd: 1)
        let verify = try await damaged.cachelog("verify")
        #expect(verify.status == ExitCode.failure, "\(verify)")
        #expect(verify.stdout.contains("problem seq \(seq): "), "\(verify)")
    }
}
