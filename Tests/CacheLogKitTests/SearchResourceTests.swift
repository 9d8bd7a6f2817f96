import CacheLogKit
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// Searches of the entry point: paging that resumes from the log, the merged list's age, the
/// object cache in the same append, and the search history.
@Suite("CacheClient: searches", .hangGuard)
struct SearchResourceTests {
    private func peopleWorld() throws -> ClientWorld {
        let world = try ClientWorld()
        let base = world.baseURL
        world.serve([
            "/people-sky.json": .json(Bodies.people(["Luke Skywalker"], next: base.absoluteString + "/people-sky-2.json", base: base)),
            "/people-sky-2.json": .json(Bodies.people(["Anakin Skywalker", "Shmi Skywalker"], next: nil, base: base, idBase: 11)),
        ])
        return world
    }

    @Test func loadMore_inALaterClient_resumesFromTheCursorInTheLog() async throws {
        let world = try peopleWorld()
        let first = try await world.client().search("sky", at: world.template("/people-{query}.json"), contract: .people).load()
        #expect(first.items.map(\.name) == ["Luke Skywalker"] && first.more == true && first.key == "search:people:sky")

        // Another client, as another process would open the database later.
        world.clock.advance(60)
        let more = try await world.client().search("sky", at: world.template("/people-{query}.json"), contract: .people).loadMore()

        #expect(more.items.map(\.name) == ["Luke Skywalker", "Anakin Skywalker", "Shmi Skywalker"])
        #expect(more.more == false && more.isCached)
        #expect(more.pages == [first.timestamp, first.timestamp + 60])
        let last = try await world.client().search("sky", at: world.template("/people-{query}.json"), contract: .people).loadMore()
        #expect(last.source != .remote && last.more == false, "the whole result is cached: nothing more to ask")
    }

    @Test func aCacheFirstSearch_answeredByTheRemote_reportsNoRemoteFailure() async throws {
        let world = try peopleWorld()
        var search = try world.client().search("sky", at: world.template("/people-{query}.json"), contract: .people)
        search.strategy = .cacheFirst

        let first = try await search.load()                 // nothing cached: the remote answers

        #expect(first.source == .remote && first.isCached)
        #expect(first.remoteFailure == nil, "the remote answered: \(String(describing: first.remoteFailure))")
    }

    @Test func loadMore_onAClockWithFractionsOfAMillisecond_extendsTheCachedList() async throws {
        let world = try peopleWorld()
        world.clock.advance(0.000_123_4)
        let client = try world.client()
        let sky = client.search("sky", at: world.template("/people-{query}.json"), contract: .people)
        _ = try await sky.load()
        world.clock.advance(1.000_987_6)

        let more = try await sky.loadMore()

        #expect(more.isCached, "the list is stamped with its first page's time exactly, not a rounded copy older than the live one")
        #expect(try client.searches().first?.items == 3)
    }

    @Test func aMergedList_isAsOldAsItsOldestPage() async throws {
        let world = try ClientWorld()
        world.serve(["/verses-love-1.json": .json(Bodies.verses(["John 13:34"])), "/verses-love-2.json": .json(Bodies.verses(["1 John 4:7"]))])
        let love = try world.client().search("love", at: world.template("/verses-{query}-{page}.json"), contract: .verses)
        let first = try await love.load()
        world.days(29)
        let more = try await love.loadMore()
        #expect(more.items.count == 2)
        #expect(more.timestamp == first.timestamp, "the list is as old as page 1")

        world.serve([:])
        world.days(2)  // day 31: page 1 is 31 days old
        let error = await #expect(throws: NoUsableDataError.self) { try await love.load() }
        #expect(error?.description.contains("cache expired (cached 2026-12-01T10:00:00Z, 31d old, max age 30d)") == true, "\(String(describing: error))")
    }

    @Test func loadMore_ofAListFromAnotherTemplate_startsOver() async throws {
        let world = try peopleWorld()
        world.serve([
            "/people-sky.json": .json(Bodies.people(["Luke Skywalker"], next: world.baseURL.absoluteString + "/people-sky-2.json", base: world.baseURL)),
            "/v2/people-sky.json": .json(Bodies.people(["Rey Skywalker"], next: nil, base: world.baseURL, idBase: 90)),
        ])
        _ = try await world.client().search("sky", at: world.template("/people-{query}.json"), contract: .people).load()

        let other = try await world.client().search("sky", at: world.template("/v2/people-{query}.json"), contract: .people).loadMore()

        #expect(other.items.map(\.name) == ["Rey Skywalker"], "another endpoint's page is not appended to this one's list")
    }

    @Test func loadMore_offline_leavesTheCacheAsItWas() async throws {
        let world = try peopleWorld()
        let client = try world.client()
        let sky = client.search("sky", at: world.template("/people-{query}.json"), contract: .people)
        _ = try await sky.load()
        world.serve([:])

        let error = await #expect(throws: NoMoreResultsError.self) { try await sky.loadMore() }
        #expect(error?.description.hasSuffix("the cache is as it was") == true)
        #expect(try client.log().entry("search:people:sky")?.seq == 2)
    }

    @Test func objects_areSavedInTheSameAppendAsTheSearch_andAKeyTooLongIsSkippedAndNamed() async throws {
        let world = try ClientWorld()
        let long = world.baseURL.absoluteString + "/people/" + String(repeating: "x", count: 600) + ".json"
        let page = #"{"count":2,"next":null,"previous":null,"results":[{"name":"Luke Skywalker","url":"\#(world.baseURL.absoluteString)/people/1.json"},{"name":"Long","url":"\#(long)"}]}"#
        world.serve(["/people-sky.json": .json(page)])
        // A clock that moves a second each time it is read: appends made apart are recorded apart.
        let ticking = world.clock
        let client = try world.client(CacheClient.Options(clock: {
            ticking.advance(1)
            return ticking.date
        }), ownClock: true)

        let loaded = try await client.search("sky", at: world.template("/people-{query}.json"), contract: .people).load()

        #expect(loaded.isCached)
        #expect(loaded.skippedObjects == ["object:" + long])
        let log = try client.log()
        let batch = try log.events().compactMap { if case .event(let event) = $0 { event } else { nil } }
        #expect(batch.map(\.key) == ["search:people:sky", "search:people:sky", "object:\(world.baseURL.absoluteString)/people/1.json", "object:\(world.baseURL.absoluteString)/people/1.json"])
        #expect(Set(batch.map(\.recordedAt)).count == 1, "one append")

        // The object serves without a request while fresh.
        world.serve([:])
        let person = try await client.object(at: URL(string: world.baseURL.absoluteString + "/people/1.json")!, contract: .person).load()
        #expect(person.items.map(\.name) == ["Luke Skywalker"] && person.source != .remote)
    }

    @Test func aSaveThatFails_deliversThePagesSayingTheyAreNotCached_andLeavesTheCacheAsItWas() async throws {
        let world = try peopleWorld()
        let template = world.template("/people-{query}.json")
        _ = try await world.client().search("sky", at: template, contract: .people).load()
        world.clock.advance(60)
        let readOnly = try world.client(CacheClient.Options(readOnly: true))
        let before = try readOnly.existingLog()?.lastSeq()

        let first = try await readOnly.search("sky", at: template, contract: .people).load()
        let more = try await readOnly.search("sky", at: template, contract: .people).loadMore()

        #expect(first.items.map(\.name) == ["Luke Skywalker"] && first.source == .remote)
        #expect(first.cacheSave == .failed(CacheLogError.readOnly) && !first.isCached)
        #expect(more.items.count == 3 && more.cacheSave == .failed(CacheLogError.readOnly) && !more.isCached)
        #expect(try readOnly.existingLog()?.lastSeq() == before)
    }

    @Test func aQueryUnderTwoContracts_isTwoCachesInOneDatabase() async throws {
        let world = try ClientWorld()
        world.serve([
            "/people-sky.json": .json(Bodies.people(["Luke Skywalker"], next: nil, base: world.baseURL)),
            "/verses-sky-1.json": .json(Bodies.verses(["Psalm 19:1"])),
        ])
        let client = try world.client()
        let people = client.search("sky", at: world.template("/people-{query}.json"), contract: .people)
        let verses = client.search("sky", at: world.template("/verses-{query}-{page}.json"), contract: .verses)
        _ = try await people.load()
        _ = try await verses.load()
        world.serve([:])

        #expect(try await people.load().items.map(\.name) == ["Luke Skywalker"])
        #expect(try await verses.load().items.map(\.scripture) == ["Psalm 19:1"])
        #expect([people.key, verses.key] == ["search:people:sky", "search:verses:sky"])
        #expect(try client.searches().map(\.key) == ["search:verses:sky", "search:people:sky"])
    }

    @Test func aQuery_isKeyedByItsBytesAsTyped_notByCaseOrUnicodeNormalization() async throws {
        let world = try ClientWorld()
        let (nfc, nfd) = ("caf\u{E9}", "cafe\u{301}")
        #expect(nfc == nfd, "the premise: Swift's String equality merges the two spellings")
        world.serve([
            "/people-caf%C3%A9.json": .json(Bodies.people(["NFC"], next: nil, base: world.baseURL)),
            "/people-cafe%CC%81.json": .json(Bodies.people(["NFD"], next: nil, base: world.baseURL, idBase: 2)),
            "/people-Caf%C3%A9.json": .json(Bodies.people(["Capital"], next: nil, base: world.baseURL, idBase: 3)),
        ])
        let client = try world.client()
        let queries = [nfc, nfd, "Caf\u{E9}"]
        for query in queries { _ = try await client.search(query, at: world.template("/people-{query}.json"), contract: .people).load() }
        world.serve([:])

        var names: [String] = []
        for query in queries {
            names += try await client.search(query, at: world.template("/people-{query}.json"), contract: .people).load().items.map(\.name)
        }
        #expect(names == ["NFC", "NFD", "Capital"])
        let history = try client.searches().map { Array($0.key.utf8) }
        #expect(history == queries.reversed().map { Array("search:people:\($0)".utf8) })
    }

    @Test func anAppsOwnSearchContract_servesItsCacheThirtyDaysByDefault() async throws {
        struct Episode: Codable, Sendable, Equatable { let title: String }
        let episodes = SearchContract<Episode>(name: "episodes") { data, response, _ in
            guard response.statusCode == 200 else { throw RemoteLoaderError.status(response.statusCode) }
            return SearchPage(items: try JSONDecoder().decode([Episode].self, from: data), next: nil)
        }
        let world = try ClientWorld(routes: ["/episodes-news.json": .json(#"[{"title":"Monday"}]"#)])
        let news = try world.client().search("news", at: world.template("/episodes-{query}.json"), contract: episodes)
        let first = try await news.load()
        world.serve([:])

        world.clock.advance(30 * 86_400 - 1)
        let stillFresh = try await news.load()
        world.clock.advance(1)
        let error = await #expect(throws: NoUsableDataError.self) { try await news.load() }

        #expect(first.key == "search:app/episodes:news" && first.isCached)
        #expect(stillFresh.items == [Episode(title: "Monday")] && stillFresh.source == .cache(timestamp: first.timestamp))
        #expect(error?.description.hasSuffix("cache expired (cached 2026-12-01T10:00:00Z, 30d old, max age 30d)") == true, "\(String(describing: error))")
    }

    /// The person's load runs on a clock a minute ahead of the search's, or two days behind it:
    /// either way it began after the search and landed first, so the search leaves it as it is.
    @Test(arguments: [60.0, -2 * 86_400.0])
    func aSearchStartedEarlier_leavesAPersonLoadedSinceAsItIs(personsClock offset: TimeInterval) async throws {
        let world = try ClientWorld()
        let person = world.baseURL.absoluteString + "/people/1.json"
        let page = Bodies.people(["Luke Skywalker"], next: nil, base: world.baseURL)
        let answer = Gate()
        defer { answer.open() }
        world.server.setHandler { request in
            if request.path == "/people-sky.json" {
                answer.wait()
                return .json(page)
            }
            return .json(#"{"name":"Luke Skywalker (newer)","url":"\#(person)"}"#)
        }
        let client = try world.client()
        let began = world.clock.date

        // The search begins (its page waits for the gate); the person is loaded on its own,
        // on the other clock, and saved first; then the search's page is answered and saved.
        async let search = client.search("sky", at: world.template("/people-{query}.json"), contract: .people).load()
        try #require(await world.server.waitForRequests(count: 1), "the search never asked")
        world.clock.set(began + offset)
        _ = try await client.object(at: URL(string: person)!, contract: .person).load()
        world.clock.set(began)
        answer.open()
        let searched = try await search

        #expect(searched.isCached)
        #expect(try client.log().retrieve("object:" + person)?.payload.contains(Data("newer".utf8)) == true)
        #expect(try client.log().entry("object:" + person)?.timestamp == began + offset)
    }

    /// The same search, loaded twice at once from two endpoints as two processes with clocks two
    /// days apart would: the load that began first and lands last leaves the other's list.
    @Test func aSearchThatBeganFirstAndLandsLast_isSuperseded_byOneThatBeganLaterOnAClockTwoDaysBehind() async throws {
        let world = try ClientWorld()
        let slowPage = Bodies.people(["Luke Skywalker"], next: nil, base: world.baseURL)
        let page = Bodies.people(["Leia Organa"], next: nil, base: world.baseURL, idBase: 5)
        let answer = Gate()
        defer { answer.open() }
        world.server.setHandler { request in
            if request.path == "/slow-sky.json" {
                answer.wait()
                return .json(slowPage)
            }
            return .json(page)
        }
        let client = try world.client()
        let began = world.clock.date

        async let first = client.search("sky", at: world.template("/slow-{query}.json"), contract: .people).load()
        try #require(await world.server.waitForRequests(count: 1), "the first search never asked")
        world.clock.set(began - 2 * 86_400)
        let second = try await client.search("sky", at: world.template("/people-{query}.json"), contract: .people).load()
        world.clock.set(began)
        answer.open()
        let refused = try await first

        #expect(second.isCached)
        #expect(refused.cacheSave.newerCache?.timestamp == began - 2 * 86_400)
        #expect(try client.log().retrieve("search:people:sky")?.payload.contains(Data("Leia".utf8)) == true)
        // Its objects are left out with it: the whole save is refused.
        #expect(try client.log().entry("object:" + world.baseURL.absoluteString + "/people/1.json") == nil)
    }

    @Test func searches_isTheHistory_theLastSearchFirst() async throws {
        let world = try peopleWorld()
        world.serve([
            "/people-sky.json": .json(Bodies.people(["Luke Skywalker"], next: nil, base: world.baseURL)),
            "/verses-love-1.json": .json(Bodies.verses(["John 13:34"])),
        ])
        let client = try world.client()
        _ = try await client.search("sky", at: world.template("/people-{query}.json"), contract: .people).load()
        world.clock.advance(60)
        _ = try await client.search("love", at: world.template("/verses-{query}-{page}.json"), contract: .verses).load()

        let history = try client.searches()

        #expect(history.map(\.query) == ["love", "sky"])
        #expect(history.map(\.contract) == ["verses", "people"])
        #expect(history.map(\.more) == [true, false])
        #expect(history.allSatisfy { $0.fresh })
        #expect(try client.searches(contract: "people", limit: 1).map(\.key) == ["search:people:sky"])
    }
}
