import CacheLogKit
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// Keys an app and the tool share without colliding, an app's JSON search contract, and the
/// pages a search lists.
@Suite("CacheClient: keys, search contracts and pages", .hangGuard)
struct KeysAndContractsTests {
    private struct Episode: Codable, Sendable, Equatable { let title: String }
    private struct EpisodePage: Decodable { let results: [Episode]; let next: String? }

    private static let episodes = SearchContract<Episode>.json(
        name: "episodes", body: EpisodePage.self, items: \.results, next: { page, _ in page.next.flatMap(URL.init(string:)).map(PageCursor.url) })

    @Test func aJSONSearchContract_readsEachPage_andRefusesABodyThatBreaksIt() async throws {
        let world = try ClientWorld()
        let second = world.baseURL.absoluteString + "/episodes-news-2.json"
        world.serve([
            "/episodes-news.json": .json(#"{"results":[{"title":"Monday"}],"next":"\#(second)"}"#),
            "/episodes-news-2.json": .json(#"{"results":[{"title":"Tuesday"}],"next":null}"#),
            "/episodes-bad.json": .json(#"{"results":"none"}"#),
        ])
        let client = try world.client()
        let news = client.search("news", at: world.template("/episodes-{query}.json"), contract: Self.episodes)

        let first = try await news.load()
        let all = try await news.loadMore()

        #expect(first.key == "search:app/episodes:news" && first.more == true)
        #expect(all.items == [Episode(title: "Monday"), Episode(title: "Tuesday")] && all.more == false)
        let bad = await caughtError { try await client.search("bad", at: world.template("/episodes-{query}.json"), contract: Self.episodes).load() }
        let error = try #require(bad as? NoUsableDataError, "\(String(describing: bad))")
        #expect((error.remoteError as? RemoteLoaderError) == .invalidData, "\(error)")
    }

    /// An app's contract named as one of the package's never shares its cache: the tool's
    /// `--contract people --query sky` reads and writes the package's pages, not the app's.
    @Test func anAppsContractNamedPeople_andTheToolsPeopleSearch_keepTwoCaches() async throws {
        struct Hero: Codable, Sendable { let name: String }
        let heroes = SearchContract<Hero>.json(name: "people", body: [Hero].self, items: { $0 }, next: { _, _ in nil })
        let world = try ClientWorld(routes: [
            "/heroes-sky.json": .json(#"[{"name":"Sky Hero"}]"#),
            "/people-sky.json": .json(Bodies.people(["Luke Skywalker"], next: nil, base: try ClientWorld().baseURL)),
        ])
        let client = try world.client()
        let own = try await client.search("sky", at: world.template("/heroes-{query}.json"), contract: heroes).load()

        let tool = try await world.cachelog(
            "load", world.template("/people-{query}.json"), "--contract", "people", "--query", "sky", "--format", "json", now: world.now)

        #expect(tool.status == 0, "\(tool.stderr)")
        #expect(tool.stdout.contains("\"source\":\"remote\""), "the tool served the app's list: \(tool.stdout)")
        #expect(own.key == "search:app/people:sky")
        let keys = try #require(try client.existingLog()).state().entries.map(\.key)
        #expect(keys.contains("search:people:sky") && keys.contains("search:app/people:sky"), "\(keys)")
    }

    /// The tool and an app name the object at a non-ASCII URL alike, so each finds what the
    /// other cached.
    @Test func anObjectAtANonASCIIURL_cachedByTheTool_isFoundByTheApp() async throws {
        let world = try ClientWorld()
        let person = world.baseURL.absoluteString + "/people/Amidalá.json"
        world.server.setHandler { _ in .json(#"{"name":"Padmé Amidala","url":"\#(person)"}"#) }

        let tool = try await world.cachelog("load", person, "--contract", "person", now: world.now)
        try #require(tool.status == 0, "\(tool.stderr)")
        let url = try #require(URL(string: person))
        let loaded = try await world.client().object(at: url, contract: .person).load()

        #expect(loaded.source != .remote, "the app asked again for what the tool cached")
        #expect(world.server.requestCount == 1)
        #expect(try world.client().existingLog()?.state().entries.map(\.key) == [CacheKey.object(url)])
    }

    @Test func anEmptyLastPage_addsNoPageToTheList() async throws {
        let world = try ClientWorld()
        let base = world.baseURL
        world.serve([
            "/people-sky.json": .json(Bodies.people(["Luke Skywalker"], next: base.absoluteString + "/people-sky-2.json", base: base)),
            "/people-sky-2.json": .json(Bodies.people([], next: nil, base: base)),
        ])
        let client = try world.client()
        let sky = client.search("sky", at: world.template("/people-{query}.json"), contract: .people)
        let first = try await sky.load()
        world.clock.advance(60)

        let last = try await sky.loadMore()

        #expect(last.items.map(\.name) == ["Luke Skywalker"] && last.more == false)
        #expect(last.pages == [first.timestamp])
    }
}
