import CacheLogKit
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// The library and the tool on one database, in two processes: what one saves, the other reads,
/// continues and validates by the same rules.
@Suite("CacheClient and cachelog on one database", .hangGuard)
struct TwoProcessTests {
    /// An app's own film type, saved under the name `films`: the app's contract, not the package's.
    struct MyFilm: Codable, Sendable, Equatable { let name: String; let year: Int }

    @Test func aSearchStartedByTheTool_isContinuedByTheLibrary_andValidateDeletesNothingValid() async throws {
        let world = try ClientWorld()
        world.serve([
            "/people-sky.json": .json(Bodies.people(["Luke Skywalker"], next: world.baseURL.absoluteString + "/people-sky-2.json", base: world.baseURL)),
            "/people-sky-2.json": .json(Bodies.people(["Anakin Skywalker", "Shmi Skywalker"], next: nil, base: world.baseURL, idBase: 11)),
            "/my-films.json": .json(#"[{"name":"Porco Rosso","year":1992}]"#),
        ])
        // Process A, the tool: page 1.
        let first = try await world.cachelog("load", world.template("/people-{query}.json"), "--contract", "people", "--query", "sky", now: world.now)
        #expect(first.status == 0, "\(first)")

        // Process B, the app: page 2, resumed from the cursor A recorded.
        world.clock.advance(60)
        let client = try world.client()
        let more = try await client.search("sky", at: world.template("/people-{query}.json"), contract: .people).loadMore()
        #expect(more.items.map(\.name) == ["Luke Skywalker", "Anakin Skywalker", "Shmi Skywalker"])
        #expect(more.isCached && more.more == false)
        let mine = FeedContract<MyFilm>.json(name: "films", body: [MyFilm].self) { $0 }
        let films = try await client.feed("films", at: world.url("/my-films.json"), contract: mine).load()
        #expect(films.items == [MyFilm(name: "Porco Rosso", year: 1992)] && films.isCached)

        // A later cron job, the tool again: every cache is valid, and none is deleted.
        world.clock.advance(3600)
        let validated = try await world.cachelog("validate", "--format", "json", now: world.now)
        #expect(validated.status == 0, "\(validated)")
        let outcomes = try #require(try JSONSerialization.jsonObject(with: Data(validated.stdout.utf8)) as? [[String: Any]])
        #expect(outcomes.count == 5)
        #expect(outcomes.allSatisfy { $0["outcome"] as? String == "fresh" }, "\(outcomes)")
        #expect(try client.log().events(EventQuery(kinds: [.delete, .expire])).allSatisfy {
            if case .event(let event) = $0 { event.reason == .replaced } else { false }
        }, "only the deletes that begin saves")
    }

    /// The five apps' stories, half through the library and half through the tool, on one
    /// database: what one saved the other serves offline, judged by the same policy.
    @Test func theFiveApps_savedByTheLibrary_areServedOfflineByTheTool() async throws {
        let world = try ClientWorld()
        world.serve([
            "/films.json": .json(Bodies.films), "/genres.json": .json(Bodies.genres),
            "/images.json": .json(#"{"items":[{"id":"73A7F70C-75DA-4C2E-B5A3-EED40DC53AA6","description":"a lake","location":"Lakeside","image":"https://example.com/lake.jpg"}]}"#),
            "/verses-love-1.json": .json(Bodies.verses(["John 13:34"])),
            "/people-sky.json": .json(Bodies.people(["Luke Skywalker"], next: nil, base: world.baseURL)),
        ])
        let client = try world.client()
        _ = try await client.feed("films", at: world.url("/films.json"), contract: .films).load()
        _ = try await client.feed("genres", at: world.url("/genres.json"), contract: .genres).load()
        _ = try await client.feed("images", at: world.url("/images.json"), contract: .images).load()
        _ = try await client.search("love", at: world.template("/verses-{query}-{page}.json"), contract: .verses).load()
        _ = try await client.search("sky", at: world.template("/people-{query}.json"), contract: .people).load()

        world.serve([:])
        world.days(6)
        for (key, contract, url) in [
            ("films", "films", "/films.json"), ("genres", "genres", "/genres.json"), ("images", "images", "/images.json"),
        ] {
            let offline = try await world.cachelog("load", world.url(url).absoluteString, "--key", key, "--contract", contract, "--format", "json", now: world.now)
            #expect(offline.status == 0 && offline.stdout.contains(#""source":"cache""#), "\(key): \(offline)")
        }
        for (query, contract, template) in [("love", "verses", "/verses-{query}-{page}.json"), ("sky", "people", "/people-{query}.json")] {
            let offline = try await world.cachelog("load", world.template(template), "--contract", contract, "--query", query, "--format", "json", now: world.now)
            #expect(offline.status == 0 && offline.stdout.contains(#""source":"cache""#), "\(query): \(offline)")
        }
        // A day later the 7-day caches expire for both, and the 30-day searches do not.
        world.days(1)
        let validated = try await world.cachelog("validate", "--dry-run", "--format", "json", now: world.now)
        let outcomes = try #require(try JSONSerialization.jsonObject(with: Data(validated.stdout.utf8)) as? [[String: Any]])
        let byKey = Dictionary(uniqueKeysWithValues: outcomes.compactMap { outcome in
            (outcome["key"] as? String).map { ($0, outcome["outcome"] as? String) }
        })
        #expect(byKey["films"] == "expired" && byKey["genres"] == "expired" && byKey["images"] == "expired")
        #expect(byKey["search:verses:love"] == "fresh" && byKey["search:people:sky"] == "fresh")
        #expect(try await client.validate(dryRun: true).map(\.outcome) == outcomes.map { ValidationOutcome.Kind(rawValue: $0["outcome"] as? String ?? "") })
    }

    /// The app's load began at 10:00 with no cache; its request fails at 10:10, and meanwhile the
    /// tool saved the key at 10:05. The save is stamped after the load began, and it is fresh:
    /// the app's load falls back to it instead of calling it a cache from a clock set ahead
    /// (remote first), or saying there is no cache (cache first, whose cache had none when asked).
    @Test(arguments: [CacheStrategy.remoteFirst, .cacheFirst])
    func aLoadWhoseRemoteFails_servesTheCacheAnotherProcessSavedDuringItsRequest(_ strategy: CacheStrategy) async throws {
        let world = try ClientWorld()
        let answer = Gate()
        defer { answer.open() }
        world.server.setHandler { request in
            if request.path == "/films.json" {
                answer.wait()
                return HTTPResponse(status: 503)
            }
            return request.path == "/mirror/films.json" ? .json(Bodies.films) : HTTPResponse(status: 404)
        }
        let client = try world.client()
        var films = client.feed("films", at: world.url("/films.json"), contract: .films)
        films.strategy = strategy
        let load = Task { [films] in try await films.load() }
        try #require(await world.server.waitForRequests(count: 1))

        world.clock.advance(300)
        let tool = try await world.cachelog(
            "load", world.url("/mirror/films.json").absoluteString, "--key", "films", "--contract", "films", "--format", "json", now: world.now)
        #expect(tool.status == 0, "\(tool)")
        world.clock.advance(300)
        answer.open()

        let loaded = try await load.value
        #expect(loaded.source == .cache(timestamp: world.clock.date.addingTimeInterval(-300)), "\(loaded.source)")
        #expect(loaded.items.map(\.title) == ["Castle in the Sky", "My Neighbor Totoro"])
        #expect(loaded.isFresh)
        #expect(loaded.remoteFailure is RemoteLoaderError, "the remote's failure is still reported: \(String(describing: loaded.remoteFailure))")
    }
}
