import Foundation
import TestSupport
import Testing

/// A database written before puts recorded their policy (a committed fixture, see its README)
/// opens, replays exactly as it was written, and is judged by the defaults of its time: 7 days,
/// no contract, the payload not decoded. New saves into it record their policy beside the old ones.
@Suite("cachelog on a database written before puts recorded their policy", .hangGuard)
struct CompatibilityTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/pre-policy/data.mdb")

    /// A sandbox whose database is a copy of the fixture.
    private func sandboxWithFixture() throws -> Sandbox {
        let sandbox = try Sandbox()
        try FileManager.default.createDirectory(atPath: sandbox.db, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.fixture.path, toPath: sandbox.db + "/data.mdb")
        return sandbox
    }

    @Test
    func replay_deliversTheHistoryAsItWasWritten_withNoPolicyOnItsPuts() async throws {
        let sandbox = try sandboxWithFixture()

        let replayed = try await sandbox.cachelog("replay", "--format", "jsonl")

        #expect(replayed.status == ExitCode.ok, "\(replayed)")
        let put = #"{"seq":2,"at":"2026-12-01T10:00:00Z","type":"put","key":"films","timestamp":"2026-12-01T10:00:00Z","bytes":388,"maxAge":null,"contract":null,"origin":"fetched","storedBytes":278}"#
        let expire = #"{"seq":11,"at":"2026-12-09T10:00:00Z","type":"expire","key":"genres","timestamp":"2026-12-01T11:00:00Z","maxAge":604800,"storedBytes":48}"#
        #expect(replayed.stdoutLines.count == 11)
        #expect(replayed.stdoutLines[1] == put)
        #expect(replayed.stdoutLines[10] == expire)
        #expect(try replayed.jsonLines().compactMap { $0.string("type") } == [
            "delete", "put", "delete", "put", "delete", "put", "delete", "put", "delete", "put", "expire",
        ])
        let withPayload = try await sandbox.cachelog("replay", "--key", "films", "--type", "put", "--payload", "--format", "jsonl")
        let films = try withPayload.jsonLines()
        #expect(films.count == 2)
        #expect(films.allSatisfy { ($0["payload"] as? [[String: Any]])?.count == 2 }, "the second put reads the first one's bytes")
        #expect(try await sandbox.cachelog("verify").status == ExitCode.ok)
    }

    @Test
    func state_andValidate_judgeItsPutsByTheDefaults_sevenDaysAndNoContract() async throws {
        let sandbox = try sandboxWithFixture()

        let state = try await sandbox.cachelog("--now", "2026-12-09T12:30:00Z", "state", "--format", "json")

        #expect(state.status == ExitCode.ok, "\(state)")
        let entries = try #require(try state.json()["entries"] as? [[String: Any]])
        #expect(entries.compactMap { $0.string("key") } == ["films", "search:people:luke", "search:verses:in the beginning"])
        #expect(entries.allSatisfy { $0.int("maxAge") == 7 * 86_400 && $0["contract"] is NSNull })
        #expect(entries.compactMap { $0["fresh"] as? Bool } == [true, false, false])
        #expect(entries.first?.string("expires") == "2026-12-10T10:00:00Z")

        let validated = try await sandbox.cachelog("--now", "2026-12-09T12:30:00Z", "validate", "--format", "json")
        #expect(validated.status == ExitCode.ok, "\(validated)")
        #expect(try validated.jsonArray().compactMap { $0.string("outcome") } == ["fresh", "expired", "expired"])
    }

    @Test
    func aNewSaveIntoIt_recordsItsPolicy_besideTheOldPuts() async throws {
        let sandbox = try sandboxWithFixture()

        let loaded = try await sandbox.cachelog(
            "--now", "2026-12-10T10:00:00Z", "load", sandbox.url("/verses.json"), "--key", "search:verses:in the beginning",
            "--contract", "verses")

        #expect(loaded.status == ExitCode.ok, "\(loaded)")
        let puts = try await sandbox.cachelog("replay", "--type", "put", "--format", "jsonl").jsonLines()
        #expect(puts.count == 6)
        #expect(puts.dropLast().allSatisfy { $0["maxAge"] is NSNull })
        #expect(puts.last?.int("maxAge") == 30 * 86_400 && puts.last?.string("contract") == "verses")
        // 29 days later the verses, saved for 30 days, are fresh; the films, saved before, are not.
        let validated = try await sandbox.cachelog("--now", "2027-01-08T10:00:00Z", "validate", "--dry-run", "--format", "json")
        let outcomes = try validated.jsonArray().map { "\($0.string("key") ?? "?") \($0.string("outcome") ?? "?")" }
        #expect(outcomes == ["films expired", "search:people:luke expired", "search:verses:in the beginning fresh"])
        #expect(try await sandbox.cachelog("verify").status == ExitCode.ok)
    }
}
