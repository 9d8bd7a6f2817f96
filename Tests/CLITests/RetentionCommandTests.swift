import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// `cachelog retention` as its help writes it, through the built binary.
@Suite("cachelog retention: the policy on the command line", .hangGuard)
struct RetentionCommandTests {
    @Test
    func history0_keepsNoHistory_asTheHelpWritesIt_andTheJSONShowsNullForForeverAndForNoLimit() async throws {
        let sandbox = try Sandbox()

        let zero = try await sandbox.cachelog("--now", Day.dec1, "retention", "--history", "0", "--size-limit", "none", "--format", "json")

        #expect(zero.status == ExitCode.ok, "\(zero)")
        let policy = try #require(try zero.json()["policy"] as? [String: Any], "\(zero)")
        #expect(policy.double("history") == 0)
        #expect(policy["sizeLimit"] is NSNull, "every key of the policy is printed, null for no limit: \(zero.stdout)")

        let forever = try await sandbox.cachelog("--now", Day.dec2, "retention", "--history", "forever", "--format", "json")
        let kept = try #require(try forever.json()["policy"] as? [String: Any], "\(forever)")
        #expect(kept["history"] is NSNull, "null for ever: \(forever.stdout)")
        #expect(kept["sizeLimit"] is NSNull, "what is not given stays as it was")
    }
}

/// Retention through the built binary: what a size limit evicts is told by `audit`, `report` and
/// `replay` after the history before it is gone, and bad policies are usage errors that record
/// nothing.
@Suite("cachelog retention: evictions told, policies checked", .hangGuard)
struct RetentionThroughTheToolTests {
    /// A JSON list of one string of `count` base64 characters that zlib cannot shrink much.
    private static func blob(_ count: Int, seed: UInt64) -> String {
        var state = seed
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * 3 / 4)
        for _ in 0..<(count * 3 / 4) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(UInt8(truncatingIfNeeded: state >> 33))
        }
        return #"[{"blob":""# + Data(bytes).base64EncodedString() + #""}]"#
    }

    @Test
    func aCacheEvictedForTheSizeLimit_isToldByAuditReportAndReplay_afterItsHistoryIsTrimmed_andThePolicyIsNoKey() async throws {
        let sandbox = try Sandbox(serving: LoopbackHTTPServer.routes([
            "/k1.json": .json(Self.blob(620_000, seed: 1)), "/k2.json": .json(Self.blob(900_000, seed: 2)),
            "/films.json": .json(#"[{"title":"Totoro"}]"#),
        ]))
        // The two caches are over the limit themselves (about 465 KB and 675 KB stored): the
        // older goes for the newer.
        let policy = try await sandbox.cachelog("--now", "2026-01-01T00:00:00Z", "retention", "--size-limit", "1MiB", "--history", "7d")
        try #require(policy.status == ExitCode.ok, "\(policy)")
        for (now, key) in [("2026-01-01T01:00:00Z", "k1"), ("2026-01-01T02:00:00Z", "k2")] {
            let load = try await sandbox.cachelog("--now", now, "load", sandbox.url("/\(key).json"), "--key", key, "--contract", "json", "--format", "json")
            #expect(load.status == ExitCode.ok, "\(load)")
            #expect(try load.json()["cached"] as? Bool == true, "\(load.stdout.prefix(200))")
        }
        // Weeks later, a save's pass trims k1's history up to the delete that evicted it.
        let later = try await sandbox.cachelog("--now", "2026-02-15T02:00:00Z", "load", sandbox.url("/films.json"), "--key", "films", "--contract", "json")
        #expect(later.status == ExitCode.ok, "\(later)")

        let replay = try await sandbox.cachelog("replay", "--key", "k1", "--format", "jsonl")
        #expect(replay.stdoutLines.count == 1 && replay.stdout.contains(#""reason":"evicted""#), "only the eviction is left: \(replay)")

        let audit = try await sandbox.cachelog("--now", "2026-02-15T03:00:00Z", "audit", "--format", "json")
        #expect(audit.status == ExitCode.ok, "\(audit)")
        let keys = try #require(try audit.json()["keys"] as? [[String: Any]], "\(audit)")
        #expect(keys.compactMap { $0.string("key") } == ["films", "k1", "k2"], "the policy's record is about no key")
        let k1 = try #require(keys.first { $0.string("key") == "k1" }?["timeline"] as? [[String: Any]])
        #expect(k1.first?.string("kind") == "deleted" && (k1.first?.string("text") ?? "").contains("evicted"), "\(k1)")

        let report = try await sandbox.cachelog("--now", "2026-02-15T03:00:00Z", "report", "--out", sandbox.path("report.html"))
        #expect(report.status == ExitCode.ok, "\(report)")
        let page = try String(contentsOfFile: sandbox.path("report.html"), encoding: .utf8)
        #expect(page.contains("deleted (evicted)"), "the report marks the eviction")
    }

    @Test
    func badPolicies_areUsageErrors_thatRecordNothing_andKeepAndKeepContractEachReplaceTheirOwn() async throws {
        let sandbox = try Sandbox()
        let first = try await sandbox.cachelog("--now", Day.dec1, "retention", "--keep", "image:=0s", "--keep-contract", "films=90d")
        try #require(first.status == ExitCode.ok, "\(first)")
        let long = String(repeating: "x", count: 600)
        let many = (0..<70).flatMap { ["--keep", "p\($0)=1d"] }
        for arguments in [["--keep", "a=1d", "--keep", "a=2d"], ["--keep", "\(long)=1d"], many, ["--by", "", "--history", "1d"],
                          ["--by", String(repeating: "b", count: 201), "--history", "1d"], ["--size-limit", "0"], ["--history", "36501d"], ["--history", "-1d"], ["--history", "1D"]] {
            let refused = try await sandbox.run(["--db", sandbox.db, "--now", Day.dec2, "retention"] + arguments)
            #expect(refused.status == ExitCode.usage, "\(arguments.prefix(4)): \(refused)")
            #expect(refused.stderrLines.count == 1, "\(refused.stderr)")
            if arguments.last == "-1d" { #expect(refused.stderr.contains("negative"), "\(refused.stderr)") }
            if arguments.last == "1D" { #expect(refused.stderr.contains(": 1d (units"), "\(refused.stderr)") }
        }
        let unchanged = try await sandbox.cachelog("retention", "--format", "json")
        let overrides = try #require(try unchanged.json()["policy"] as? [String: Any])["overrides"] as? [[String: Any]]
        #expect(overrides?.count == 2, "\(unchanged.stdout)")

        let contractOnly = try await sandbox.cachelog("--now", Day.dec3, "retention", "--keep-contract", "json=2d", "--format", "json")
        let after = try #require(try contractOnly.json()["policy"] as? [String: Any])["overrides"] as? [[String: Any]]
        #expect(after?.compactMap { $0.string("prefix") } == ["image:"], "--keep-contract leaves the prefixes: \(contractOnly.stdout)")
        #expect(after?.compactMap { $0.string("contract") } == ["json"])

        let cleared = try await sandbox.cachelog("--now", Day.dec4, "retention", "--keep", "none", "--format", "json")
        let left = try #require(try cleared.json()["policy"] as? [String: Any])["overrides"] as? [[String: Any]]
        #expect(left?.compactMap { $0.string("prefix") } == [] && left?.count == 1, "\(cleared.stdout)")
    }
}
