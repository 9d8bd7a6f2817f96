import CacheLogKit
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// Searches of the entry point: paging that resumes from the log, the merged list's age, the
/// object cache in the same append, and the search history.
@Suite("CacheClient: searches", .timeLimit(.minutes(2)))
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
        let client = try world.client()

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
