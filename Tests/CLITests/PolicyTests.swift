import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// Each cache keeps the policy it was saved under, so one database serves the five apps side by
/// side: `validate`, `state` and `audit` judge each key by its own policy, through the built
/// `cachelog` against a loopback server.
@Suite("cachelog: the policy travels with the entry", .hangGuard)
struct PolicyTests {
    /// The five apps' caches, saved on Dec 1 with their contracts' defaults.
    private func fiveApps(_ sandbox: Sandbox) async throws {
        let saves: [(key: String, contract: String)] = [
            ("images", "images"), ("films", "films"), ("genres", "genres"),
            ("search:verses:in the beginning", "verses"), ("search:people:luke", "people"),
        ]
        for save in saves {
            let loaded = try await sandbox.cachelog(
                "--now", Day.dec1, "load", sandbox.url("/\(save.contract).json"), "--key", save.key, "--contract", save.contract)
            try #require(loaded.status == ExitCode.ok, "\(loaded)")
        }
    }

    @Test
    func load_recordsEachContractsDefaultMaxAgeAndItsContract_onThePut() async throws {
        let sandbox = try Sandbox()
        try await fiveApps(sandbox)

        let puts = try await sandbox.cachelog("replay", "--type", "put", "--format", "jsonl").jsonLines()

        #expect(puts.map { "\($0.string("contract") ?? "?") \($0.int("maxAge") ?? -1)" } == [
            "images 604800", "films 604800", "genres 604800", "verses 2592000", "people 2592000",
        ])
    }

    @Test
    func load_withMaxAge_recordsTheOverride() async throws {
        let sandbox = try Sandbox()

        let loaded = try await sandbox.cachelog(
            "--now", Day.dec1, "load", sandbox.url("/verses.json"), "--key", "v", "--contract", "verses", "--max-age", "12h")

        #expect(loaded.status == ExitCode.ok, "\(loaded)")
        let put = try await sandbox.cachelog("replay", "--type", "put", "--format", "jsonl").jsonLines().first
        #expect(put?.int("maxAge") == 12 * 3_600)
    }

    @Test
    func load_withoutMaxAge_judgesTheCacheByTheMaxAgeItWasSavedUnder_asStateDoes() async throws {
        let sandbox = try Sandbox()
        let feed = sandbox.url("/films.json")
        _ = try await sandbox.cachelog("--now", Day.dec1, "load", feed, "--key", "films", "--contract", "films", "--max-age", "90s")

        // A day later, cache first: the 90-second cache is stale, so the remote is asked.
        let later = try await sandbox.cachelog(
            "--now", Day.dec2, "load", feed, "--key", "films", "--contract", "films", "--strategy", "cache-first", "--format", "json")

        #expect(try later.json().string("source") == "remote")
        #expect(sandbox.server.requestCount == 2)
        // That save recorded the contract's 7 days: offline, two minutes later, it serves; given
        // --max-age judges instead.
        let offline = try await sandbox.cachelog(
            "--now", "2026-12-02T10:02:00Z", "load", try deadURL(), "--key", "films", "--contract", "films")
        #expect(offline.status == ExitCode.ok, "\(offline)")
        let stale = try await sandbox.cachelog(
            "--now", "2026-12-02T10:02:00Z", "load", try deadURL(), "--key", "films", "--contract", "films", "--max-age", "1m")
        #expect(stale.status == ExitCode.noUsableData, "\(stale)")
    }

    @Test
    func fiveAppsInOneDatabase_validateInOneRun_judgesEachKeyByItsOwnPolicy() async throws {
        let sandbox = try Sandbox()
        try await fiveApps(sandbox)

        // Eight days later: the 7-day feeds are expired, the 30-day searches fresh.
        let validated = try await sandbox.cachelog("--now", "2026-12-09T10:00:00Z", "validate", "--format", "json")

        #expect(validated.status == ExitCode.ok, "\(validated)")
        let outcomes = try validated.jsonArray().map { "\($0.string("key") ?? "?") \($0.string("outcome") ?? "?")" }
        #expect(outcomes == [
            "films expired", "genres expired", "images expired",
            "search:people:luke fresh", "search:verses:in the beginning fresh",
        ])
        let expires = try await sandbox.cachelog("replay", "--type", "expire", "--format", "jsonl").jsonLines()
        #expect(expires.compactMap { $0.int("maxAge") } == [604_800, 604_800, 604_800], "each expire names the max age that judged it")

        // Thirty days after the save, the searches go too.
        let later = try await sandbox.cachelog("--now", "2026-12-31T10:00:00Z", "validate", "--format", "json")
        #expect(try later.jsonArray().map { "\($0.string("key") ?? "?") \($0.string("outcome") ?? "?")" } == [
            "search:people:luke expired", "search:verses:in the beginning expired",
        ])
    }

    @Test
    func validate_withMaxAge_judgesEveryKeyByIt() async throws {
        let sandbox = try Sandbox()
        try await fiveApps(sandbox)

        let validated = try await sandbox.cachelog("--now", Day.dec3, "validate", "--max-age", "1d", "--dry-run", "--format", "json")

        #expect(try validated.jsonArray().allSatisfy { $0.string("outcome") == "expired" }, "\(validated)")
    }

    @Test
    func state_showsEachEntrysMaxAgeExpiryFreshnessAndContract() async throws {
        let sandbox = try Sandbox()
        try await fiveApps(sandbox)

        let state = try await sandbox.cachelog("--now", "2026-12-09T10:00:00Z", "state", "--format", "json")

        let entries = try #require(try state.json()["entries"] as? [[String: Any]])
        let films = try #require(entries.first { $0.string("key") == "films" })
        #expect(films.int("maxAge") == 604_800 && films.string("expires") == "2026-12-08T10:00:00Z")
        #expect(films["fresh"] as? Bool == false && films.string("contract") == "films")
        let verses = try #require(entries.first { $0.string("key") == "search:verses:in the beginning" })
        #expect(verses.int("maxAge") == 2_592_000 && verses.string("expires") == "2026-12-31T10:00:00Z")
        #expect(verses["fresh"] as? Bool == true && verses.string("contract") == "verses")
        // A cache exactly max age old is expired: "7 days old or more".
        let atExpiry = try await sandbox.cachelog("--now", "2026-12-08T10:00:00Z", "state", "--key", "films", "--format", "json")
        #expect((try atExpiry.json()["entries"] as? [[String: Any]])?.first?["fresh"] as? Bool == false)
        let text = try await sandbox.cachelog("--now", "2026-12-09T10:00:00Z", "state")
        #expect(text.stdoutLines.contains { $0.hasPrefix("films ") && $0.contains(" 7d ") && $0.contains(" no ") }, "\(text)")
    }

    @Test
    func audit_placesBecameStale_byEachVersionsRecordedPolicy() async throws {
        let sandbox = try Sandbox()
        try await fiveApps(sandbox)

        let audit = try await sandbox.cachelog("--now", "2026-12-20T10:00:00Z", "audit", "--format", "json")

        let keys = try #require(try audit.json()["keys"] as? [[String: Any]])
        func stale(_ key: String) -> [String] {
            let timeline = keys.first { $0.string("key") == key }?["timeline"] as? [[String: Any]] ?? []
            return timeline.filter { $0.string("kind") == "stale" }.compactMap { $0.string("at") }
        }
        #expect(stale("films") == ["2026-12-08T10:00:00Z"])
        #expect(stale("search:verses:in the beginning") == [], "30 days have not passed")
    }

    @Test
    func validate_deletesACacheThatDoesNotReadBack_andSaysItWasUnreadable() async throws {
        let sandbox = try Sandbox()
        try #require(try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films").status == ExitCode.ok)
        try await Planting(db: sandbox.db).flipByte(ofRecord: 2, offsetFromEnd: 1)

        let validated = try await sandbox.cachelog("--now", Day.dec2, "validate", "--format", "json")

        let outcome = try #require(try validated.jsonArray().first)
        #expect(outcome.string("outcome") == "deleted")
        #expect(outcome.string("detail")?.hasPrefix("unreadable; deleted at seq 3") == true, "\(outcome)")
    }

    @Test
    func validate_deletesAFreshCacheWhosePayloadDoesNotFollowItsContract_asARetrievalError() async throws {
        let sandbox = try Sandbox()
        try #require(try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films").status == ExitCode.ok)
        // A put saved under the films contract whose payload is no film list.
        try await Planting(db: sandbox.db).appendPut(
            key: "films", payload: #"{"not":"films"}"#, timestamp: 1_796_119_200, maxAge: 604_800, contract: "films")

        let validated = try await sandbox.cachelog("--now", Day.dec2, "validate", "--format", "json")

        #expect(validated.status == ExitCode.ok, "\(validated)")
        let outcome = try #require(try validated.jsonArray().first)
        #expect(outcome.string("outcome") == "deleted")
        #expect(outcome.string("detail")?.hasPrefix("not a valid films payload") == true, "\(outcome)")
        let last = try await sandbox.cachelog("replay", "--reverse", "--limit", "1", "--format", "jsonl").jsonLines().first
        #expect(last?.string("type") == "delete" && last?.string("reason") == "retrieval-error")
    }

    /// An app that saved its own type under the name `films` (through the library, or a database
    /// written before puts marked the package's own contracts) owns that name: validate cannot
    /// prove the payload broken, so it judges the cache by age alone and leaves it.
    @Test
    func validate_judgesAnAppsContractNamedLikeABuiltInOneByAgeAlone() async throws {
        let sandbox = try Sandbox()
        try #require(try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films").status == ExitCode.ok)
        try await Planting(db: sandbox.db).appendPut(
            key: "films", payload: #"[{"title":"an app's own film type"}]"#, timestamp: 1_796_119_200, maxAge: 604_800,
            contract: "films", builtIn: false)

        let validated = try await sandbox.cachelog("--now", Day.dec2, "validate", "--format", "json")

        #expect(validated.status == ExitCode.ok, "\(validated)")
        #expect(try validated.jsonArray().first?.string("outcome") == "fresh", "\(validated)")
        let last = try await sandbox.cachelog("replay", "--reverse", "--limit", "1", "--format", "jsonl").jsonLines().first
        #expect(last?.string("type") == "put", "\(String(describing: last))")
    }
}

/// `load --strategy`: the genres app's cache first, through the built binary; the server counts
/// the requests.
@Suite("cachelog load: cache first and remote first", .hangGuard)
struct StrategyTests {
    private func loadGenres(_ sandbox: Sandbox, at now: String, _ extra: String...) async throws -> CLIResult {
        try await sandbox.run(
            ["--db", sandbox.db, "--now", now, "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres", "--format", "json"]
                + extra)
    }

    @Test
    func genres_defaultsToCacheFirst_aFreshCacheIsServedWithNoRequest_anExpiredOneGoesToTheRemote() async throws {
        let sandbox = try Sandbox()

        let first = try await loadGenres(sandbox, at: Day.dec1)
        #expect(try first.json().string("source") == "remote")
        #expect(sandbox.server.requestCount == 1)

        let fresh = try await loadGenres(sandbox, at: "2026-12-08T09:59:59Z")
        #expect(fresh.status == ExitCode.ok, "\(fresh)")
        #expect(try fresh.json().string("source") == "cache")
        #expect(try fresh.json()["cached"] as? Bool == true)
        #expect(sandbox.server.requestCount == 1, "a fresh cache asks nothing of the remote")

        let expired = try await loadGenres(sandbox, at: Day.dec8)
        #expect(try expired.json().string("source") == "remote")
        #expect(sandbox.server.requestCount == 2)
        #expect(try await sandbox.cachelog("replay", "--type", "put", "--format", "jsonl").jsonLines().count == 2)
    }

    @Test
    func strategyRemoteFirst_overridesTheContractsDefault() async throws {
        let sandbox = try Sandbox()
        _ = try await loadGenres(sandbox, at: Day.dec1)

        let loaded = try await loadGenres(sandbox, at: Day.dec2, "--strategy", "remote-first")

        #expect(try loaded.json().string("source") == "remote")
        #expect(sandbox.server.requestCount == 2)
    }

    @Test
    func cacheFirst_withAnExpiredCacheAndNoRemote_exitsThree_namingBothCauses() async throws {
        let sandbox = try Sandbox()
        _ = try await loadGenres(sandbox, at: Day.dec1)

        let failed = try await sandbox.cachelog(
            "--now", Day.dec8, "load", try deadURL(path: "/genres.json"), "--key", "genres", "--contract", "genres")

        #expect(failed.status == ExitCode.noUsableData, "\(failed)")
        #expect(failed.stdout.isEmpty)
        #expect(failed.stderrLines.count == 1)
        #expect(failed.stderr.contains("remote unreachable") && failed.stderr.contains("cache expired"), "\(failed)")
    }

    @Test
    func genres_retriesInvalidDataTwiceByDefault() async throws {
        let sandbox = try Sandbox(serving: { _ in .json("{ not genres") })

        let failed = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres")

        #expect(failed.status == ExitCode.noUsableData, "\(failed)")
        #expect(sandbox.server.requestCount == 3)
    }

    @Test
    func load_help_showsEachContractsDefaults() async throws {
        let sandbox = try Sandbox()

        let help = try await sandbox.cachelog("load", "--help")

        #expect(help.stdout.contains("genres  podcast genres  7d   cache-first   2"), "\(help.stdout)")
        #expect(help.stdout.contains("people  people search   30d  remote-first  0"), "\(help.stdout)")
        #expect(help.stdout.contains("The people search spec names no max age"))
    }
}
