import Foundation
import Locking
import LoopbackHTTP
import TestSupport
import Testing

/// The edges of the search, the object cache, the clock and the first save, through the built
/// binary: each of these gave a wrong answer before the rule moved into the library.
@Suite("cachelog: searches as old as their oldest page, objects all or nothing, caches from the future", .hangGuard)
struct EdgeTests {
    /// A people page whose second person's URL makes an `object:` key longer than LMDB's 511 bytes.
    private static func pageWithALongURL(_ sandbox: Sandbox) -> (page: String, long: String) {
        let long = sandbox.url("/people/" + String(repeating: "x", count: 600) + ".json")
        let page = #"{"count":2,"next":null,"previous":null,"results":[{"name":"Luke Skywalker","url":"\#(sandbox.url("/people/1.json"))"},{"name":"Long","url":"\#(long)"}]}"#
        return (page, long)
    }

    @Test
    func peopleSearch_withAnObjectKeyTooLong_isCached_namesTheSkippedObject_andSaysWhatTheLogHolds() async throws {
        let sandbox = try Sandbox()
        let (page, long) = Self.pageWithALongURL(sandbox)
        sandbox.server.setHandler(LoopbackHTTPServer.routes(["/people-sky.json": .json(page)]))

        // On the real clock, so that two appends would be recorded apart.
        let loaded = try await sandbox.cachelog(
            "load", sandbox.url("/people-{query}.json"), "--contract", "people", "--query", "sky", "--format", "json")

        #expect(loaded.status == ExitCode.ok, "\(loaded)")
        #expect(try loaded.json()["cached"] as? Bool == true)
        #expect(loaded.stderrLines.count == 1 && loaded.stderr.contains("object:" + long) && loaded.stderr.contains("was not cached"), "\(loaded)")
        let state = try await sandbox.cachelog("state", "--format", "json").json()
        let keys = (state["entries"] as? [[String: Any]])?.compactMap { $0.string("key") }
        #expect(keys == ["object:" + sandbox.url("/people/1.json"), "search:people:sky"], "the search and the storable object, saved together")
        let recorded = try await sandbox.cachelog("replay", "--format", "jsonl").jsonLines()
        #expect(Set(recorded.compactMap { $0.string("at") }).count == 1, "one append")
    }

    @Test
    func aMergedSearch_isAsOldAsItsFirstPage_soOfflineItExpiresWithIt() async throws {
        let sandbox = try Sandbox()
        sandbox.server.setHandler(LoopbackHTTPServer.routes([
            "/verses-love-1.json": .json(#"[{"scripture":"John 13:34","distance":0.1,"text":"t"}]"#),
            "/verses-love-2.json": .json(#"[{"scripture":"1 John 4:7","distance":0.2,"text":"t"}]"#),
        ]))
        let template = sandbox.url("/verses-{query}-{page}.json")
        #expect(try await sandbox.cachelog("--now", "2026-12-01T09:00:00Z", "load", template, "--contract", "verses", "--query", "love").status == ExitCode.ok)

        let more = try await sandbox.cachelog(
            "--now", "2026-12-30T09:00:00Z", "load", template, "--contract", "verses", "--query", "love", "--more", "--format", "json")
        #expect(try more.json().string("timestamp") == "2026-12-01T09:00:00Z", "\(more)")

        sandbox.server.setHandler { _ in .status(500) }
        let offline = try await sandbox.cachelog("--now", "2027-01-25T09:00:00Z", "load", template, "--contract", "verses", "--query", "love")
        #expect(offline.status == ExitCode.noUsableData, "page 1 is 55 days old: the merged list is too, \(offline)")
        #expect(offline.stderr.contains("cache expired (cached 2026-12-01T09:00:00Z, 55d old, max age 30d)"), "\(offline)")
    }

    @Test
    func more_ofASearchLoadedFromAnotherTemplate_startsOver() async throws {
        let sandbox = try Sandbox()
        sandbox.server.setHandler(LoopbackHTTPServer.routes([
            "/v1/verses-love-1.json": .json(#"[{"scripture":"John 13:34","distance":0.1,"text":"t"}]"#),
            "/v2/verses-love-1.json": .json(#"[{"scripture":"Romans 13:10","distance":0.1,"text":"t"}]"#),
            "/v2/verses-love-2.json": .json(#"[{"scripture":"1 John 4:7","distance":0.2,"text":"t"}]"#),
        ]))
        #expect(try await sandbox.cachelog(
            "--now", Day.dec1, "load", sandbox.url("/v1/verses-{query}-{page}.json"), "--contract", "verses", "--query", "love").status == ExitCode.ok)

        let more = try await sandbox.cachelog(
            "--now", Day.dec2, "load", sandbox.url("/v2/verses-{query}-{page}.json"), "--contract", "verses", "--query", "love", "--more",
            "--format", "json")

        let scriptures = (try more.json()["items"] as? [[String: Any]])?.compactMap { $0.string("scripture") }
        #expect(scriptures == ["Romans 13:10"], "another endpoint's first page, not v1's list with v2's second page: \(more)")
    }

    @Test
    func aCacheStampedInTheFuture_isNeverFresh_inLoadStateValidateOrImage() async throws {
        let sandbox = try Sandbox()
        sandbox.server.setHandler(LoopbackHTTPServer.routes([
            "/films.json": .json(Feeds.films), "/poster.jpg": HTTPResponse(status: 200, body: Data("poster".utf8)),
        ]))
        // A run whose clock was far ahead.
        #expect(try await sandbox.cachelog("--now", "2090-01-01T00:00:00Z", "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films").status == ExitCode.ok)
        #expect(try await sandbox.cachelog("--now", "2090-01-01T00:00:00Z", "image", sandbox.url("/poster.jpg"), "--format", "json").status == ExitCode.ok)
        sandbox.server.setHandler { _ in .status(500) }

        let state = try await sandbox.cachelog("--now", Day.dec1, "state", "--format", "json").json()
        #expect((state["entries"] as? [[String: Any]])?.map { $0["fresh"] as? Bool } == [false, false], "\(state)")
        let load = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(load.status == ExitCode.noUsableData && load.stderr.contains("cache not trusted (stamped 2090-01-01T00:00:00Z"), "\(load)")
        let image = try await sandbox.cachelog("--now", Day.dec1, "image", sandbox.url("/poster.jpg"), "--format", "json")
        #expect(image.status == ExitCode.noUsableData, "\(image)")
        let validated = try await sandbox.cachelog("--now", Day.dec1, "validate", "--format", "json").jsonArray()
        #expect(validated.map { $0.string("outcome") } == ["expired", "expired"], "\(validated)")
    }

    @Test
    func aCacheFromARunWhoseClockWasAhead_doesNotBlockTheNextSave() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.cachelog("--now", "2090-01-01T00:00:00Z", "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres").status == ExitCode.ok)

        let load = try await sandbox.cachelog(
            "--now", Day.dec1, "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres", "--strategy", "remote-first",
            "--format", "json")

        #expect(load.status == ExitCode.ok, "\(load)")
        #expect(try load.json()["cached"] as? Bool == true)
        #expect(try load.json().string("timestamp") == Day.dec1)
    }

    @Test
    func aLoadThatSavesNothing_createsNoDatabase() async throws {
        let sandbox = try Sandbox()
        let dead = try DeadPort()

        let load = try await sandbox.cachelog("load", dead.url("/films.json").absoluteString, "--key", "films", "--contract", "films")

        #expect(load.status == ExitCode.noUsableData, "\(load)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.db), "nothing was saved, so nothing was created")
    }

    /// Judged by when the requests reached the server, not by how long the runs took: a retry
    /// starts at least its wait after the attempt before it, on any machine; how many fit in a
    /// budget depends on how fast the machine answers, so only the bound is asserted there (the
    /// budget's exact arithmetic is the retry decorator's spec, on a clock the test moves).
    @Test
    func retries_waitLongerBeforeEachRetry_withinTheTimeout() async throws {
        let sandbox = try Sandbox()
        let arrivals = Locked([ContinuousClock.Instant]())
        sandbox.server.setHandler { _ in
            arrivals.withLock { $0.append(.now) }
            return .json("not json")
        }
        func gaps() -> [Duration] {
            let times = arrivals.withLock { $0 }
            return zip(times, times.dropFirst()).map { $0.duration(to: $1) }
        }

        let load = try await sandbox.cachelog("load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres", "--retries", "2")

        #expect(load.status == ExitCode.noUsableData, "\(load)")
        let waited = gaps()
        #expect(waited.count == 2, "the first try and two retries")
        #expect(waited.count == 2 && waited[0] >= .milliseconds(500) && waited[1] >= .seconds(1), "waited half a second, then a second: \(waited)")

        // A timeout shorter than the waits: the first try, and a retry half a second later if
        // the first answer came within the first half second; never a third (its wait of 1 s
        // would end 1.5 s after the first try, past --timeout).
        arrivals.withLock { $0 = [] }
        let bounded = try await sandbox.cachelog("load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres", "--retries", "5", "--timeout", "1")
        #expect(bounded.status == ExitCode.noUsableData, "\(bounded)")
        let within = gaps()
        #expect(within.count <= 1, "no retry starts whose wait would end past --timeout: \(within)")
        #expect(within.allSatisfy { $0 >= .milliseconds(500) }, "\(within)")
    }
}
