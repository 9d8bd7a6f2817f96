import Foundation
import TestSupport
import Testing

/// One --format for every command: text, json or jsonl, after the command name or before it.
@Suite("One --format", .hangGuard)
struct FormatTests {
    @Test(arguments: [["stats"], ["state"], ["validate", "--dry-run"], ["audit"], ["verify"], ["version"], ["compact", "--before", "1"]])
    func formatJSON_beforeTheCommandName_printsOneJSONDocument(_ command: [String]) async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let result = try await sandbox.run(["--db", sandbox.db, "--format", "json"] + command)
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect((try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) != nil, "\(result)")
    }

    @Test
    func replay_takesJSONLines_beforeOrAfterTheCommandName() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let before = try await sandbox.cachelog("--format", "jsonl", "replay")
        let after = try await sandbox.cachelog("replay", "--format", "jsonl")
        #expect(before.status == ExitCode.ok, "\(before)")
        #expect(before.stdout == after.stdout)
        #expect(try before.jsonLines().count == 8)
    }

    @Test
    func theCommandsOwnFormat_winsOverTheOneBeforeIt() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["--format", "text", "version", "--format", "json"])
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(try result.json().string("version") != nil)
    }

    @Test(arguments: [
        (["state", "--format", "jsonl"], "state prints one document, not lines: use --format json"),
        (["--format", "jsonl", "stats"], "stats prints one document, not lines: use --format json"),
        (["replay", "--format", "json"], "replay prints one event per line: use --format jsonl"),
        (["--format", "json", "demo"], "demo takes no --format"),
        (["state", "--format", "yaml"], "yaml"),
    ])
    func aFormatACommandCannotPrint_isAUsageError_sayingWhichToUse(arguments: [String], says: String) async throws {
        let sandbox = try Sandbox()
        // demo takes no --db either: ask it about --format alone.
        let result = try await sandbox.run(arguments.contains("demo") ? arguments : ["--db", sandbox.db] + arguments)
        #expect(result.status == ExitCode.usage, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.first?.contains(says) == true, "\(result)")
    }

    /// `--help` lists, for `--format`, exactly the formats the command prints: each one listed
    /// runs, each other one is a usage error (state listed jsonl and refused it; report listed
    /// json and jsonl).
    @Test(arguments: [
        (["load", "URL", "--key", "films", "--contract", "films"], ["text", "json"]),
        (["image", "URL"], ["text", "json"]),
        (["searches"], ["text", "json"]),
        (["replay"], ["text", "jsonl"]),
        (["state"], ["text", "json"]),
        (["audit"], ["text", "json"]),
        (["report"], ["text"]),
        (["validate", "--dry-run"], ["text", "json"]),
        (["stats"], ["text", "json"]),
        (["verify"], ["text", "json"]),
        (["rebuild"], ["text", "json"]),
        (["compact", "--before", "1"], ["text", "json"]),
        (["version"], ["text", "json"]),
    ])
    func eachCommandsHelp_listsTheFormatsItPrints_andOnlyThose(command: [String], prints: [String]) async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let arguments = command.map { $0 == "URL" ? sandbox.url("/films.json") : $0 }

        let help = try await sandbox.run([command[0], "--help"])

        let options = try #require(help.stdout.range(of: "\n  --format <format>"), "\(command[0]) --help has no --format: \(help)")
        let listing = try #require(help.stdout[options.upperBound...].firstMatch(of: #/\(values:\s+([a-z,\s]+?)\)/#), "\(help)")
        let listed = listing.output.1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(listed == prints, "\(command[0]) --help lists \(listed)")
        for format in ["text", "json", "jsonl"] {
            let result = try await sandbox.run(["--db", sandbox.db, "--now", Day.dec10] + arguments + ["--format", format])
            if listed.contains(format) {
                #expect(result.status == ExitCode.ok, "\(command[0]) --format \(format) is listed: \(result)")
            } else {
                #expect(result.status == ExitCode.usage, "\(command[0]) --format \(format) is not listed: \(result)")
            }
        }
    }

    @Test
    func statePayload_showsWhatEachEntryHeld_thenAndNow() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        // A week before Dec 10 10:00 the films put of Dec 3 (seq 6) was live.
        let then = try await sandbox.cachelog("--now", Day.dec10, "state", "--as-of", "7d", "--payload", "--key", "films", "--format", "json")
        #expect(then.status == ExitCode.ok, "\(then)")
        let entry = try #require((try then.json()["entries"] as? [[String: Any]])?.first)
        #expect(entry.int("seq") == 6)
        let items = try #require(entry["payload"] as? [[String: Any]], "\(then)")
        // The very payload the put at seq 6 recorded.
        let put = try await sandbox.cachelog("replay", "--from", "6", "--to", "6", "--payload", "--format", "jsonl")
        let recorded = try #require(try put.jsonLines().first?["payload"] as? [[String: Any]])
        #expect(items.count == recorded.count && !items.isEmpty)
        #expect(items.map { $0.string("title") } == recorded.map { $0.string("title") })

        let text = try await sandbox.cachelog("--now", Day.dec10, "state", "--as-of", "7d", "--payload")
        #expect(text.status == ExitCode.ok, "\(text)")
        let payloadLines = text.stdoutLines.filter { $0.hasPrefix("    payload: ") }
        #expect(payloadLines.count == 2, "\(text)")
        #expect(payloadLines.allSatisfy { $0.count <= 113 }, "\(text)")

        // Without --payload, no payload field.
        let plain = try await sandbox.cachelog("--now", Day.dec10, "state", "--as-of", "7d", "--format", "json")
        #expect((try plain.json()["entries"] as? [[String: Any]])?.allSatisfy { $0["payload"] == nil } == true)
    }
}
