import CacheLogKit
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// The Star Wars people search app, as an app writes it with the library: each query a search of
/// the client (`search:people:QUERY`), remote first, each page caching the merged list so far
/// (30 days) with where the next page is, the cache the fallback when the first page cannot be
/// loaded, and each person with a URL cached as an object.
private struct PeopleSearchApp {
    let env: AppEnvironment

    /// The search for `query`. A new value each time: "load more" finds where the list ends in
    /// the log, not in anything this value kept.
    func search(_ query: String) -> SearchResource<Person> {
        env.cache.search(query, at: env.template("/api/people/?search={query}"), contract: .people)
    }
}

@Suite("People search app: CacheClient searches, paged, query-keyed 30-day cache on the log", .hangGuard)
struct PeopleSearchAcceptanceTests {
    @Test
    func peopleSearch_onlineSearch_deliversTheFirstPageAndReplacesTheQueryCache() async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader]])
        env.clock.set(1, daysAfter: TestClock.start)
        env.serve(people(["darth": [[vader, maul]]]))

        let results = try await app.search("darth").load()

        #expect(results.items == [vader, maul] && results.source == .remote && results.cacheSave == .saved)
        #expect(results.more == false, "no load more on the last page")
        #expect(try await app.search("darth").cacheOnly.load().items == [vader, maul])
        #expect(try env.loggedEvents()
            == LoggedEvent.save("search:people:darth", at: TestClock.start) + LoggedEvent.save("search:people:darth", at: env.clock.date))
    }

    @Test
    func peopleSearch_loadMore_deliversTheMergedListAndCachesItAsOldAsItsFirstPage() async throws {
        let env = try AppEnvironment(serving: people(["sky": [[luke], [anakin, shmi]]]))
        let app = PeopleSearchApp(env: env)
        let firstPage = try await app.search("sky").load()
        #expect(firstPage.items == [luke] && firstPage.source == .remote && firstPage.more == true)
        env.clock.set(0, daysAfter: TestClock.start, plusSeconds: 30)

        let secondPage = try await app.search("sky").loadMore()

        #expect(env.server.requests.map { $0.queryValue("page") } == [nil, "2"], "the second page at the first page's next URL")
        #expect(secondPage.items == [luke, anakin, shmi] && secondPage.more == false && secondPage.cacheSave == .saved)
        #expect(secondPage.timestamp == TestClock.start && secondPage.pages == [TestClock.start, env.clock.date])
        #expect(try await app.search("sky").cacheOnly.load().items == [luke, anakin, shmi])
        #expect(try env.loggedEvents()
            == LoggedEvent.save("search:people:sky", at: TestClock.start) + LoggedEvent.save("search:people:sky", at: TestClock.start))
    }

    @Test
    func peopleSearch_offlineAfterLoadMore_deliversTheMergedListFromTheCache() async throws {
        let env = try AppEnvironment(serving: people(["sky": [[luke], [anakin, shmi]]]))
        let app = PeopleSearchApp(env: env)
        _ = try await app.search("sky").load()
        _ = try await app.search("sky").loadMore()
        env.goOffline()

        let results = try await app.search("sky").load()

        #expect(results.items == [luke, anakin, shmi] && results.source == .cache(timestamp: TestClock.start))
        #expect(results.more == false)
        #expect(try env.loggedEvents()
            == LoggedEvent.save("search:people:sky", at: TestClock.start) + LoggedEvent.save("search:people:sky", at: TestClock.start))
    }

    @Test
    func peopleSearch_loadMoreOffline_throwsNoMoreResultsAndLeavesTheCachedListAsItWas() async throws {
        let env = try AppEnvironment(serving: people(["sky": [[luke], [anakin, shmi]]]))
        let app = PeopleSearchApp(env: env)
        _ = try await app.search("sky").load()
        env.goOffline()

        let error = await caughtError { try await app.search("sky").loadMore() }

        let noMore = try #require(error as? NoMoreResultsError, "\(String(describing: error))")
        #expect(noMore.remoteFailed && (noMore.cause as? RemoteLoaderError) == .connectivity)
        #expect(noMore.description.hasPrefix("no more results for search:people:sky: remote unreachable: Failed to connect to 127.0.0.1 port "))
        #expect(noMore.description.hasSuffix(": Couldn't connect to server; the cache is as it was"), "\(noMore.description)")
        let cached = try await app.search("sky").cacheOnly.load()
        #expect(cached.items == [luke] && cached.more == true, "page 1, still with its next page")
        #expect(try env.loggedEvents() == LoggedEvent.save("search:people:sky", at: TestClock.start))
    }

    @Test
    func peopleSearch_onlineSearch_cachesEachPersonAsAnObject_whichLoadsWithoutARequest() async throws {
        let env = try AppEnvironment(serving: people([:]))
        let vaderURL = env.url("/api/people/4/")
        let vaderWithURL = Person(name: "Darth Vader", height: "202", mass: "136", birthYear: "41.9BBY", gender: "male", url: vaderURL)
        env.serve(people(["darth": [[vaderWithURL, maul]]]))
        let app = PeopleSearchApp(env: env)

        let results = try await app.search("darth").load()
        env.goOffline(.serverError)
        let person = try await env.cache.object(at: vaderURL, contract: .person).load()

        #expect(results.items == [vaderWithURL, maul] && results.isCached)
        #expect(person.items == [vaderWithURL] && person.source == .cache(timestamp: TestClock.start))
        #expect(env.server.requestCount == 1, "the person came from the object cache")
        #expect(try env.loggedEvents()
            == LoggedEvent.save("search:people:darth", at: TestClock.start) + LoggedEvent.save("object:\(vaderURL.absoluteString)", at: TestClock.start),
            "Darth Maul has no URL: no object")
    }

    @Test
    func peopleSearch_twoQueries_areCachedUnderSeparateKeys() async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader, maul], "sky": [luke]])
        env.goOffline()

        #expect(try await app.search("darth").load().items == [vader, maul])
        #expect(try await app.search("sky").load().items == [luke])
        #expect(try env.loggedEvents()
            == LoggedEvent.save("search:people:darth", at: TestClock.start) + LoggedEvent.save("search:people:sky", at: TestClock.start))
    }

    @Test(arguments: Offline.allCases)
    func peopleSearch_offlineWithFreshCache_deliversCachedPeople(offline: Offline) async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader, maul]])
        env.clock.set(10, daysAfter: TestClock.start)
        env.goOffline(offline)

        let results = try await app.search("darth").load()

        #expect(results.items == [vader, maul] && results.source == .cache(timestamp: TestClock.start))
        #expect((results.remoteFailure as? RemoteLoaderError) == (offline == .connectionRefused ? .connectivity : .invalidData))
        #expect(results.more == false)
        #expect(try env.loggedEvents() == LoggedEvent.save("search:people:darth", at: TestClock.start))
    }

    @Test
    func peopleSearch_offlineWithCacheOneSecondShortOfThirtyDaysOld_deliversCachedPeople() async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader]])
        env.clock.set(30, daysAfter: TestClock.start, plusSeconds: -1)
        env.goOffline()

        let results = try await app.search("darth").load()

        #expect(results.items == [vader] && results.source == .cache(timestamp: TestClock.start))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:people:darth", at: TestClock.start))
    }

    @Test
    func peopleSearch_offlineWithCacheExactlyThirtyDaysOld_deliversNoUsableDataError() async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader]])
        env.clock.set(30, daysAfter: TestClock.start)
        env.goOffline()

        let error = await caughtError { try await app.search("darth").load() }

        expectNoUsableData(
            error, key: "search:people:darth", remote: .connectivity, cache: .expired(timestamp: TestClock.start, maxAge: .days(30)))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:people:darth", at: TestClock.start))
    }

    @Test
    func peopleSearch_offlineWithCacheMoreThanThirtyDaysOld_deliversNoUsableDataError() async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader]])
        env.clock.set(45, daysAfter: TestClock.start)
        env.goOffline(.invalidJSON)

        let error = await caughtError { try await app.search("darth").load() }

        expectNoUsableData(
            error, key: "search:people:darth", remote: .invalidData, cache: .expired(timestamp: TestClock.start, maxAge: .days(30)))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:people:darth", at: TestClock.start))
    }

    @Test
    func peopleSearch_offlineWithEmptyCacheForTheQuery_deliversNoUsableDataErrorEvenWhenAnotherQueryIsCached() async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader]])
        env.goOffline()

        let error = await caughtError { try await app.search("sky").load() }

        expectNoUsableData(error, key: "search:people:sky", remote: .connectivity, cache: .empty)
        #expect(try env.loggedEvents() == LoggedEvent.save("search:people:darth", at: TestClock.start))
    }

    @Test
    func peopleSearch_validate_expiresAnExpiredQueryCacheWithAnExpireEvent() async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader]])
        env.clock.set(30, daysAfter: TestClock.start)

        let outcomes = try await env.cache.validate()

        #expect(outcomes.map(\.key) == ["search:people:darth"] && outcomes.map(\.outcome) == [.expired])
        env.goOffline()
        let error = await caughtError { try await app.search("darth").load() }
        expectNoUsableData(error, key: "search:people:darth", remote: .connectivity,
                           cache: .gone(.expired(at: env.clock.date, timestamp: TestClock.start, maxAge: days(30))))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:people:darth", at: TestClock.start) + [
            .expire("search:people:darth", timestamp: TestClock.start, maxAge: days(30)),
        ])
    }

    // MARK: - Helpers

    /// The app, after online one-page searches at ``TestClock/start`` that cached `cached`
    /// (query → people), in query order.
    private func peopleSearchAppWithCache(of cached: [String: [Person]]) async throws -> (AppEnvironment, PeopleSearchApp) {
        let env = try AppEnvironment(serving: people(cached.mapValues { [$0] }))
        let app = PeopleSearchApp(env: env)
        for (query, results) in cached.sorted(by: { $0.key < $1.key }) {
            let loaded = try await app.search(query).load()
            #expect(loaded.items == results && loaded.source == .remote && loaded.cacheSave == .saved)
        }
        return (env, app)
    }
}

// MARK: - Sample payloads (contract: {count, next, previous, results: [{name, …, url?}]})

private let luke = Person(name: "Luke Skywalker", height: "172", mass: "77", birthYear: "19BBY", gender: "male")
private let anakin = Person(name: "Anakin Skywalker", height: "188", mass: "84", birthYear: "41.9BBY", gender: "male")
private let shmi = Person(name: "Shmi Skywalker", height: "163", mass: "unknown", birthYear: "72BBY", gender: "female")
private let vader = Person(name: "Darth Vader", height: "202", mass: "136", birthYear: "41.9BBY", gender: "male")
private let maul = Person(name: "Darth Maul", height: "175", mass: "80", birthYear: "54BBY", gender: "male")

/// The server's handler for `GET /api/people/?search=<query>[&page=<n>]` answering page n of
/// `pages[query]` (or an empty result), with `next` pointing at page n + 1 when there is one.
/// A person's `url` is sent when it has one.
private func people(_ pages: [String: [[Person]]]) -> LoopbackHTTPServer.Handler {
    { request in
        guard request.path == "/api/people/", let query = request.queryValue("search") else { return .notFound }
        let queryPages = pages[query] ?? [[]]
        let number = Int(request.queryValue("page") ?? "1") ?? 1
        guard queryPages.indices.contains(number - 1) else { return .notFound }
        func link(_ page: Int) -> Any {
            guard queryPages.indices.contains(page - 1) else { return NSNull() }
            var components = URLComponents()
            components.scheme = "http"
            components.percentEncodedHost = "127.0.0.1"
            components.port = Int(request.header("Host")?.split(separator: ":").last ?? "")
            components.path = "/api/people/"
            components.queryItems = [URLQueryItem(name: "search", value: query), URLQueryItem(name: "page", value: "\(page)")]
            return components.url?.absoluteString ?? NSNull()
        }
        let results: [[String: Any]] = queryPages[number - 1].map { person in
            var fields: [String: Any] = [
                "name": person.name, "height": person.height ?? "unknown", "mass": person.mass ?? "unknown",
                "birth_year": person.birthYear ?? "unknown", "gender": person.gender ?? "n/a", "hair_color": "blond",
            ]
            fields["url"] = person.url?.absoluteString
            return fields
        }
        return .json(jsonData([
            "count": queryPages.joined().count, "next": link(number + 1), "previous": link(number - 1), "results": results,
        ]))
    }
}
