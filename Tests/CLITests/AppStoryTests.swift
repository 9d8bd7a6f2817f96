import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// Each seed app, told through the built `cachelog` against a loopback server: every scenario
/// and use-case course of its spec, in order, each with the requests the server saw, ending with
/// the exact history the log holds.
@Suite("cachelog: the five apps' stories", .hangGuard)
struct AppStoryTests {
    /// One app's story: its database, its server (switched off and on), its commands.
    private struct Story {
        let sandbox: Sandbox
        let online: LoopbackHTTPServer.Handler

        init(_ online: @escaping LoopbackHTTPServer.Handler = LoopbackHTTPServer.routes(Feeds.routes)) throws {
            sandbox = try Sandbox(serving: online)
            self.online = online
        }

        func goOffline() { sandbox.server.setHandler { _ in .status(500) } }
        func goOnline() { sandbox.server.setHandler(online) }
        var requests: Int { sandbox.server.requestCount }

        /// `cachelog --now NOW ARGS --format json`.
        func json(_ now: String, _ arguments: String...) async throws -> CLIResult {
            try await sandbox.run(["--db", sandbox.db, "--now", now] + arguments + ["--format", "json"])
        }

        /// The log, one line per event: seq, type, key, when, and what the type records.
        func history() async throws -> [String] {
            try await sandbox.cachelog("replay", "--format", "jsonl").jsonLines().map { event in
                var line = "\(event.int("seq") ?? 0) \(event.string("type") ?? "?") \(event.string("key") ?? "?") \(event.string("at") ?? "?")"
                switch event.string("type") {
                case "put": line += " maxAge=\(event.int("maxAge").map(String.init) ?? "none") contract=\(event.string("contract") ?? "none")"
                case "delete": line += " \(event.string("reason") ?? "?")"
                case "expire": line += " cached=\(event.string("timestamp") ?? "?") maxAge=\(event.int("maxAge") ?? 0)"
                default: break
                }
                return line
            }
        }
    }

    private static let week = 7 * 86_400, month = 30 * 86_400

    @Test
    func imageFeed() async throws {
        let story = try Story()
        let feed = story.sandbox.url("/images.json")
        func load(_ now: String) async throws -> CLIResult { try await story.json(now, "load", feed, "--key", "images", "--contract", "images") }

        // Offline, empty cache: an error.
        story.goOffline()
        #expect(try await load(Day.dec1).status == ExitCode.noUsableData)
        // Online: the remote feed, cached.
        story.goOnline()
        #expect(try await load(Day.dec1).json().string("source") == "remote")
        // Offline, cache younger than 7 days (a second short): the cached feed.
        story.goOffline()
        #expect(try await load("2026-12-08T09:59:59Z").json().string("source") == "cache")
        // Offline, cache 7 days old: an error.
        #expect(try await load(Day.dec8).status == ExitCode.noUsableData)
        // Validate: the expired cache goes.
        #expect(try await story.json(Day.dec8, "validate").jsonArray().first?.string("outcome") == "expired")
        // Image data: the remote, then the cache with no request.
        story.goOnline()
        let before = story.requests
        let image = story.sandbox.url("/images.json")
        #expect(try await story.json(Day.dec9, "image", image).json().string("source") == "remote")
        #expect(try await story.json(Day.dec9, "image", image).json().string("source") == "cache")
        #expect(story.requests == before + 1)

        #expect(try await story.history() == [
            "1 delete images 2026-12-01T10:00:00Z replaced",
            "2 put images 2026-12-01T10:00:00Z maxAge=\(Self.week) contract=images",
            "3 expire images 2026-12-08T10:00:00Z cached=2026-12-01T10:00:00Z maxAge=\(Self.week)",
            "4 delete image:\(image) 2026-12-09T10:00:00Z replaced",
            "5 put image:\(image) 2026-12-09T10:00:00Z maxAge=\(Self.week) contract=image",
        ])
    }

    @Test
    func filmFeed() async throws {
        let story = try Story()
        let feed = story.sandbox.url("/films.json")
        func load(_ now: String) async throws -> CLIResult { try await story.json(now, "load", feed, "--key", "films", "--contract", "films") }

        #expect(try await load(Day.dec1).json().string("source") == "remote")
        // A film whose id is not a UUID is invalid data: the cache serves.
        story.sandbox.server.setHandler { _ in .json(#"[{"id":"1","title":"t","description":"d","image":"https://x.test/i","url":"https://x.test/f"}]"#) }
        let invalid = try await load(Day.dec2)
        #expect(try invalid.json().string("source") == "cache", "\(invalid)")
        story.goOnline()
        #expect(try await load(Day.dec3).json().string("source") == "remote")
        story.goOffline()
        #expect(try await load("2026-12-10T09:59:59Z").json().string("source") == "cache")
        #expect(try await load(Day.dec10).status == ExitCode.noUsableData)
        #expect(try await story.json(Day.dec10, "validate").jsonArray().first?.string("outcome") == "expired")
        // The film's poster: not cached and no server, exit 3; then online, cached.
        let poster = story.sandbox.url("/films.json")
        #expect(try await story.json(Day.dec10, "image", poster).status == ExitCode.noUsableData)
        story.goOnline()
        #expect(try await story.json(Day.dec10, "image", poster).json().string("source") == "remote")

        #expect(try await story.history() == [
            "1 delete films 2026-12-01T10:00:00Z replaced",
            "2 put films 2026-12-01T10:00:00Z maxAge=\(Self.week) contract=films",
            "3 delete films 2026-12-03T10:00:00Z replaced",
            "4 put films 2026-12-03T10:00:00Z maxAge=\(Self.week) contract=films",
            "5 expire films 2026-12-10T10:00:00Z cached=2026-12-03T10:00:00Z maxAge=\(Self.week)",
            "6 delete image:\(poster) 2026-12-10T10:00:00Z replaced",
            "7 put image:\(poster) 2026-12-10T10:00:00Z maxAge=\(Self.week) contract=image",
        ])
    }

    @Test
    func podcastGenres() async throws {
        let story = try Story()
        let list = story.sandbox.url("/genres.json")
        func load(_ now: String) async throws -> CLIResult { try await story.json(now, "load", list, "--key", "genres", "--contract", "genres") }

        // 1. Connectivity, empty cache: the remote list, cached.
        #expect(try await load(Day.dec1).json().string("source") == "remote")
        #expect(story.requests == 1)
        // 2. Connectivity, cache younger than 7 days: the cached list, no request.
        #expect(try await load("2026-12-08T09:59:59Z").json().string("source") == "cache")
        #expect(story.requests == 1)
        // 3. Connectivity, cache 7 days old: the remote list, cached.
        #expect(try await load(Day.dec8).json().string("source") == "remote")
        #expect(story.requests == 2)
        // 4. No connectivity, cache younger than 7 days: the cached list, no request.
        story.goOffline()
        #expect(try await load(Day.dec9).json().string("source") == "cache")
        #expect(story.requests == 2)
        // 5. No connectivity, cache 7 days old: an error, after 2 retries of the invalid answer.
        #expect(try await load("2026-12-15T10:00:00Z").status == ExitCode.noUsableData)
        #expect(story.requests == 2 + 3)
        // Validate: the expired cache goes.
        #expect(try await story.json("2026-12-15T10:00:00Z", "validate").jsonArray().first?.string("outcome") == "expired")
        // 6. No connectivity, empty cache: an error.
        #expect(try await load("2026-12-15T10:00:00Z").status == ExitCode.noUsableData)

        #expect(try await story.history() == [
            "1 delete genres 2026-12-01T10:00:00Z replaced",
            "2 put genres 2026-12-01T10:00:00Z maxAge=\(Self.week) contract=genres",
            "3 delete genres 2026-12-08T10:00:00Z replaced",
            "4 put genres 2026-12-08T10:00:00Z maxAge=\(Self.week) contract=genres",
            "5 expire genres 2026-12-15T10:00:00Z cached=2026-12-08T10:00:00Z maxAge=\(Self.week)",
        ])
    }

    @Test
    func verseSearch() async throws {
        let story = try Story(SearchTests.handler)
        let template = story.sandbox.url("/verses?q={query}&page={page}")
        func search(_ now: String, _ extra: String...) async throws -> CLIResult {
            try await story.sandbox.run(
                ["--db", story.sandbox.db, "--now", now, "load", template, "--contract", "verses", "--query", "love", "--format", "json"] + extra)
        }
        let key = "search:verses:love"

        #expect(try await search(Day.dec1).json().string("source") == "remote")
        #expect(try await search(Day.dec1, "--more").json()["items"] as? [Any] != nil)
        story.goOffline()
        // Offline within 30 days: the merged list; at 30 days: an error.
        let cached = try await search("2026-12-31T09:59:59Z")
        #expect(try cached.json().string("source") == "cache")
        #expect((try cached.json()["items"] as? [Any])?.count == 2)
        #expect(try await search("2026-12-31T10:00:00Z").status == ExitCode.noUsableData)
        // A 30-day cache survives a validation at 8 days; it goes at 30.
        #expect(try await story.json(Day.dec9, "validate").jsonArray().first?.string("outcome") == "fresh")
        #expect(try await story.json("2026-12-31T10:00:00Z", "validate").jsonArray().first?.string("outcome") == "expired")

        #expect(try await story.history() == [
            "1 delete \(key) 2026-12-01T10:00:00Z replaced",
            "2 put \(key) 2026-12-01T10:00:00Z maxAge=\(Self.month) contract=verses",
            "3 delete \(key) 2026-12-01T10:00:00Z replaced",
            "4 put \(key) 2026-12-01T10:00:00Z maxAge=\(Self.month) contract=verses",
            "5 expire \(key) 2026-12-31T10:00:00Z cached=2026-12-01T10:00:00Z maxAge=\(Self.month)",
        ])
    }

    @Test
    func peopleSearch() async throws {
        let story = try Story(SearchTests.handler)
        func search(_ query: String, _ now: String, _ extra: String...) async throws -> CLIResult {
            try await story.sandbox.run(
                ["--db", story.sandbox.db, "--now", now, "load", story.sandbox.url("/api/people/?search={query}"), "--contract", "people",
                 "--query", query, "--format", "json"] + extra)
        }

        // The app's first search is the empty one.
        #expect(try await search("", Day.dec1).json().string("source") == "remote")
        #expect(try await search("sky", Day.dec2).json()["more"] as? Bool == true)
        #expect((try await search("sky", Day.dec2, "--more").json()["items"] as? [Any])?.count == 3)
        // Each person is in the object cache: loading one asks nothing.
        let requests = story.requests
        let luke = story.sandbox.url("/api/people/luke/")
        #expect(try await story.json(Day.dec3, "load", luke, "--contract", "person").json().string("source") == "cache")
        #expect(story.requests == requests)
        // The search history: the last search first.
        #expect(try await story.json(Day.dec3, "searches").jsonArray().compactMap { $0.string("query") } == ["sky", ""])
        story.goOffline()
        #expect((try await search("sky", Day.dec3).json()["items"] as? [Any])?.count == 3)
        #expect(try await search("sky", Day.dec3, "--more").status == ExitCode.ok, "at the end, more is what the cache holds")

        // Each save is delete + put: the search, then each person its new page returned (the
        // people of the earlier pages keep the age of the page they came with).
        func save(_ seq: Int, _ key: String, _ at: String, _ contract: String) -> [String] {
            ["\(seq) delete \(key) \(at) replaced", "\(seq + 1) put \(key) \(at) maxAge=\(Self.month) contract=\(contract)"]
        }
        let person = { (name: String) in "object:" + story.sandbox.url("/api/people/\(name)/") }
        #expect(try await story.history()
            == save(1, "search:people:", Day.dec1, "people") + save(3, person("everyone"), Day.dec1, "person")
            + save(5, "search:people:sky", Day.dec2, "people") + save(7, person("luke"), Day.dec2, "person")
            + save(9, "search:people:sky", Day.dec2, "people")
            + save(11, person("anakin"), Day.dec2, "person") + save(13, person("shmi"), Day.dec2, "person"))
    }
}
