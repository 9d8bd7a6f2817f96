import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// The story the tool exists for, told with real commands: online, offline within max age,
/// offline at max age, validation, and the log that explains it afterwards.
@Suite("cachelog: the whole story", .hangGuard)
struct StoryTests {
    @Test
    func story_onlineThenOfflineWithinMaxAgeThenAtMaxAge_validateExpires_stateAsOfAndReplayTellIt() async throws {
        let sandbox = try Sandbox()
        let feed = sandbox.url("/films.json")

        // 1. Online: the feed loads from the server and is cached.
        let online = try await sandbox.cachelog("--now", Day.dec1, "load", feed, "--key", "films", "--contract", "films", "--format", "json")
        #expect(online.status == ExitCode.ok, "\(online)")
        #expect(online.stderr.isEmpty)
        let fresh = try online.json()
        #expect(fresh.string("source") == "remote")
        #expect(fresh.string("key") == "films")
        #expect(fresh.string("timestamp") == Day.dec1)
        #expect(fresh.int("age") == 0)
        let items = try #require(fresh["items"] as? [[String: Any]])
        #expect(items.compactMap { $0.string("title") } == ["Castle in the Sky", "My Neighbor Totoro"])

        // 2. Offline (HTTP 500) three days later, within the 7-day max age: the cache is served.
        sandbox.server.setHandler { _ in .status(500) }
        let offline = try await sandbox.cachelog("--now", Day.dec4, "load", feed, "--key", "films", "--contract", "films", "--format", "json")
        #expect(offline.status == ExitCode.ok, "\(offline)")
        #expect(offline.stderr.isEmpty)
        let cached = try offline.json()
        #expect(cached.string("source") == "cache")
        #expect(cached.string("timestamp") == Day.dec1)
        #expect(cached.int("age") == 3 * 86_400)
        #expect((cached["items"] as? [[String: Any]])?.compactMap { $0.string("title") } == ["Castle in the Sky", "My Neighbor Totoro"])

        // 3. Exactly seven days after the save: the cache is expired; one line on stderr, exit 3.
        let expired = try await sandbox.cachelog("--now", Day.dec8, "load", feed, "--key", "films", "--contract", "films", "--format", "json")
        #expect(expired.status == ExitCode.noUsableData, "\(expired)")
        #expect(expired.stdout.isEmpty)
        #expect(expired.stderrLines.count == 1, "\(expired.stderr)")
        #expect(expired.stderr.hasPrefix("cachelog: no usable data for films"))
        #expect(expired.stderr.contains("cache expired"))
        #expect(sandbox.server.requestCount == 3)

        // 4. Validation expires it: an expire event removes it.
        let validated = try await sandbox.cachelog("--now", Day.dec8, "validate", "--max-age", "7d")
        #expect(validated.status == ExitCode.ok, "\(validated)")
        #expect(validated.stdoutLines.count == 1)
        #expect(validated.stdout.hasPrefix("films: expired (cached \(Day.dec1), 7d old, max age 7d; expired at seq 3)"))

        // 5. The state as of an earlier date still shows the entry; now it is gone.
        let before = try await sandbox.cachelog("state", "--as-of", "2026-12-05T00:00:00Z", "--format", "json")
        #expect(before.status == ExitCode.ok, "\(before)")
        let past = try before.json()
        #expect(past.int("seq") == 2)
        let entries = try #require(past["entries"] as? [[String: Any]])
        #expect(entries.count == 1)
        #expect(entries.first?.string("key") == "films")
        #expect(entries.first?.string("timestamp") == Day.dec1)
        #expect(entries.first?.int("seq") == 2)
        #expect((entries.first?.int("bytes") ?? 0) > 0)

        let today = try await sandbox.cachelog("state", "--format", "json")
        #expect(today.status == ExitCode.ok, "\(today)")
        #expect(try today.json().int("seq") == 3)
        #expect((try today.json()["entries"] as? [Any])?.isEmpty == true)

        // 6. The replay lists exactly the events of the story; the offline loads appended nothing.
        let replay = try await sandbox.cachelog("replay", "--format", "jsonl")
        #expect(replay.status == ExitCode.ok, "\(replay)")
        #expect(replay.stderr.isEmpty)
        let events = try replay.jsonLines()
        try #require(events.count == 3, "\(replay.stdout)")

        #expect(events[0].int("seq") == 1)
        #expect(events[0].string("type") == "delete")
        #expect(events[0].string("key") == "films")
        #expect(events[0].string("at") == Day.dec1)
        #expect(events[0].string("reason") == "replaced")

        #expect(events[1].int("seq") == 2)
        #expect(events[1].string("type") == "put")
        #expect(events[1].string("key") == "films")
        #expect(events[1].string("at") == Day.dec1)
        #expect(events[1].string("timestamp") == Day.dec1)
        #expect(events[1].int("bytes") == entries.first?.int("bytes"))
        #expect((events[1].int("storedBytes") ?? 0) > 0)

        #expect(events[2].int("seq") == 3)
        #expect(events[2].string("type") == "expire")
        #expect(events[2].string("key") == "films")
        #expect(events[2].string("at") == Day.dec8)
        #expect(events[2].string("timestamp") == Day.dec1)
        #expect(events[2].int("maxAge") == 7 * 86_400)
        for event in events { #expect((event.int("storedBytes") ?? 0) > 0) }
    }

    @Test
    func load_offlineWithCacheExactlyMaxAgeOld_exitsThreeWithOneLine() async throws {
        let sandbox = try Sandbox()
        let feed = sandbox.url("/genres.json")
        let online = try await sandbox.cachelog("--now", "2026-12-01T10:00:00Z", "load", feed, "--key", "genres", "--contract", "genres", "--max-age", "12h")
        #expect(online.status == ExitCode.ok, "\(online)")
        sandbox.server.setHandler { _ in .status(500) }

        let oneSecondBefore = try await sandbox.cachelog("--now", "2026-12-01T21:59:59Z", "load", feed, "--key", "genres", "--contract", "genres", "--max-age", "12h")
        #expect(oneSecondBefore.status == ExitCode.ok, "\(oneSecondBefore)")
        #expect(oneSecondBefore.stdoutLines.first == "genres: 3 items from cache, cached 2026-12-01T10:00:00Z (age 11h 59m)")

        let atMaxAge = try await sandbox.cachelog("--now", "2026-12-01T22:00:00Z", "load", feed, "--key", "genres", "--contract", "genres", "--max-age", "12h")
        #expect(atMaxAge.status == ExitCode.noUsableData, "\(atMaxAge)")
        #expect(atMaxAge.stdout.isEmpty)
        #expect(atMaxAge.stderrLines == [
            "cachelog: no usable data for genres: remote sent invalid data: HTTP status 500, not 200; cache expired (cached 2026-12-01T10:00:00Z, 12h old, max age 12h)",
        ])
    }
}
