import Foundation
import Testing

/// `validate --dry-run` answers "what would expire on Friday?" without writing anything.
@Suite("cachelog validate --dry-run", .timeLimit(.minutes(2)))
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
}
