import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// Retention at scale through the built binary, as the issue's reproduction ran it: a long
/// history of hundreds of small caches under the tightest size limit keeps every live cache,
/// says why the limit cannot be met, and a save after it stays live; `retention --apply` says
/// what it removed; a load of an evicted cache says it was evicted; prefixes win before contracts.
@Suite("cachelog retention: the floor, true reports, why a cache is gone", .hangGuard)
struct RetentionFloorCLITests {
    /// A history written by the test writer: saves, expires and deletes over `keys` keys.
    private func history(_ sandbox: Sandbox, events: Int, keys: Int, seed: Int = 5) async throws {
        let writer = try await ChildProcess.run(try builtProduct("cachelog-writer"), [
            sandbox.db, String(events), "--history", "--keys", String(keys), "--days", "60", "--start", "2026-09-01T00:00:00Z",
            "--seed", String(seed),
        ])
        try #require(writer.exited && writer.status == 0, "\(writer.stderrText)")
    }

    private func liveKeys(_ sandbox: Sandbox) async throws -> [String] {
        let state = try await sandbox.cachelog("state", "--format", "json")
        try #require(state.status == ExitCode.ok, "\(state)")
        return (try state.json()["entries"] as? [[String: Any]] ?? []).compactMap { $0.string("key") }
    }

    private func recordCount(_ sandbox: Sandbox) async throws -> Int {
        let stats = try await sandbox.cachelog("stats", "--format", "json")
        let events = try #require(try stats.json()["events"] as? [String: Any], "\(stats)")
        return try #require(events.int("total"), "\(stats)")
    }

    @Test
    func aLimitBelowTheFloor_keepsEveryLiveCache_saysWhy_andASaveAfterItStaysLive() async throws {
        let sandbox = try Sandbox(serving: LoopbackHTTPServer.routes(["/genres.json": .json(#"{"genres":[{"id":1,"name":"Comedy"}]}"#)]))
        // Two thousand keys' history needs more than the tightest limit allows, whatever is evicted.
        try await history(sandbox, events: 100_000, keys: 2_000)
        let live = try await liveKeys(sandbox)
        #expect(live.count > 1_400, "\(live.count) live keys")

        let set = try await sandbox.cachelog("--now", "2026-11-01T00:00:00Z", "retention", "--size-limit", "1MiB")

        #expect(set.status == ExitCode.ok, "\(set)")
        let unmet = set.stdoutLines.first { $0.hasPrefix("limit unmet the history of ") }
        #expect(unmet?.contains("needs about ") == true && unmet?.hasSuffix("the size limit of 1MiB cannot be met without dropping that history; the live caches stay") == true,
                "\(set)")
        #expect(set.stdout.contains("evicted 0 caches"), "\(set)")
        #expect(try await liveKeys(sandbox) == live, "every live cache stays")
        let json = try await sandbox.cachelog("--now", "2026-11-01T00:00:00Z", "retention", "--format", "json")
        let pass = try #require(try json.json()["lastPass"] as? [String: Any], "\(json)")
        #expect((pass["unmetLimit"] as? [String: Any])?.int("limit") == 1 << 20, "\(json.stdout)")

        let saved = try await sandbox.cachelog("--now", "2026-11-01T01:00:00Z", "load", sandbox.url("/genres.json"), "--key", "saved-after-the-pass", "--contract", "genres", "--format", "json")
        #expect(try saved.status == ExitCode.ok && (saved.json()["cached"] as? Bool) == true, "\(saved)")
        let applied = try await sandbox.cachelog("--now", "2026-11-01T02:00:00Z", "retention", "--apply")
        #expect(applied.status == ExitCode.ok, "\(applied)")
        #expect(try await liveKeys(sandbox) == (live + ["saved-after-the-pass"]).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }, "the save stays live")
        #expect(try await sandbox.cachelog("verify").status == ExitCode.ok)
    }

    @Test
    func retentionApply_reportsWhatItRemoved_inEveryRun_onCopiesOfOneDatabase() async throws {
        let original = try Sandbox()
        try await history(original, events: 20_000, keys: 50)
        let records = try await recordCount(original)
        for run in 0..<20 {
            let copy = try Sandbox()
            try FileManager.default.createDirectory(atPath: copy.db, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: original.db + "/data.mdb", toPath: copy.db + "/data.mdb")

            let applied = try await copy.cachelog("--now", "2026-11-01T00:00:00Z", "retention", "--history", "1d", "--apply", "--format", "json")

            #expect(applied.status == ExitCode.ok, "run \(run): \(applied)")
            let pass = try #require(try applied.json()["lastPass"] as? [String: Any], "run \(run): \(applied)")
            // The policy's own record is appended by the run, and removes nothing.
            let went = records + 1 - (try await recordCount(copy))
            #expect(pass.int("removed") == went && went > 10_000, "run \(run): reported \(pass.int("removed") ?? -1), \(went) went")
            #expect(pass["finished"] as? Bool == true)
        }
    }

    @Test
    func aLoadOfAnEvictedCache_saysItWasEvicted_andByWhichLimit() async throws {
        let blob = #"[{"blob":""# + String(repeating: "x", count: 10) + #""}]"#
        var routes = ["/small.json": HTTPResponse.json(blob)]
        var state: UInt64 = 7
        for index in 0..<3 {
            var bytes: [UInt8] = []
            for _ in 0..<400_000 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes.append(UInt8(truncatingIfNeeded: state >> 33))
            }
            routes["/big\(index).json"] = .json(#"[{"blob":""# + Data(bytes).base64EncodedString() + #""}]"#)
        }
        let sandbox = try Sandbox(serving: LoopbackHTTPServer.routes(routes))
        try #require(try await sandbox.cachelog("--now", "2026-01-01T00:00:00Z", "retention", "--size-limit", "1MiB", "--history", "7d").status == ExitCode.ok)
        for (hour, path) in ["/big0.json", "/big1.json", "/big2.json"].enumerated() {
            let load = try await sandbox.cachelog("--now", "2026-01-01T0\(hour + 1):00:00Z", "load", sandbox.url(path), "--key", "k\(hour)", "--contract", "json")
            #expect(load.status == ExitCode.ok, "\(load)")
        }
        let evicted = try await sandbox.cachelog("replay", "--type", "delete", "--format", "jsonl").jsonLines().filter { $0.string("reason") == "evicted" }
        let first = try #require(evicted.first?.string("key"), "a cache was evicted")
        let at = try #require(evicted.first?.string("at"))

        let offline = try await sandbox.cachelog("--now", "2026-01-01T05:00:00Z", "load", sandbox.url("/gone.json"), "--key", first, "--contract", "json",
                                                 "--strategy", "remote-first")

        #expect(offline.status == ExitCode.noUsableData, "\(offline)")
        #expect(offline.stderrLines == ["cachelog: no usable data for \(first): remote sent invalid data: HTTP status 404, not 200; no cache: evicted at \(at): the database passed its size limit of 1MiB"],
                "\(offline)")
    }

    @Test
    func aLoadOfARemovedCache_saysWhenItWasRemoved_inEveryStrategy() async throws {
        let sandbox = try Sandbox(serving: LoopbackHTTPServer.routes(["/films.json": .json(#"[{"title":"Totoro"}]"#)]))
        let saved = try await sandbox.cachelog("--now", "2026-12-01T10:00:00Z", "load", sandbox.url("/films.json"), "--key", "films", "--contract", "json")
        #expect(saved.status == ExitCode.ok, "\(saved)")
        let removed = try await sandbox.cachelog("--now", "2026-12-01T11:00:00Z", "remove", "films")
        #expect(removed.status == ExitCode.ok, "\(removed)")

        for strategy in ["cache-only", "cache-first", "remote-first"] {
            let load = try await sandbox.cachelog("--now", "2026-12-01T12:00:00Z", "load", sandbox.url("/gone.json"), "--key", "films", "--contract", "json",
                                                  "--strategy", strategy)
            #expect(load.status == ExitCode.noUsableData, "\(strategy): \(load)")
            #expect(load.stderrLines.count == 1 && load.stderr.contains("no cache: removed at 2026-12-01T11:00:00Z"), "\(strategy): \(load)")
        }
    }

    @Test
    func retention_recordsThePrefixesBeforeTheContracts_soThatAKeysPrefixWins() async throws {
        let sandbox = try Sandbox(serving: LoopbackHTTPServer.routes(["/poster.json": .json(#"[{"id":1}]"#)]))
        for day in 1...3 {
            let load = try await sandbox.cachelog("--now", "2026-12-0\(day)T10:00:00Z", "load", sandbox.url("/poster.json"), "--key", "image:poster",
                                                  "--contract", "json", "--strategy", "remote-first")
            #expect(load.status == ExitCode.ok, "\(load)")
        }
        // The contract given first on the command line: the prefix is still matched first.
        let set = try await sandbox.cachelog("--now", "2026-12-04T10:00:00Z", "retention", "--keep-contract", "json=30d", "--keep", "image:=0s", "--format", "json")

        #expect(set.status == ExitCode.ok, "\(set)")
        let overrides = try #require((try set.json()["policy"] as? [String: Any])?["overrides"] as? [[String: Any]], "\(set)")
        #expect(overrides.first?.string("prefix") == "image:" && overrides.last?.string("contract") == "json", "\(overrides)")
        // Under the contract's 30 days nothing would go; the prefix keeps no history (the first
        // put stays, as the base of the live put's delta).
        let removed = (try set.json()["lastPass"] as? [String: Any])?.int("removed") ?? 0
        #expect(removed > 0, "the prefix's window (no history) won over the contract's 30 days: \(set.stdout)")
        let history = try await sandbox.cachelog("replay", "--key", "image:poster", "--format", "jsonl").jsonLines()
        #expect(history.count == 2 && history.allSatisfy { $0.string("type") == "put" }, "\(history)")
    }
}
