import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation
import Locking
import LoopbackHTTP
import TestSupport
import Testing

/// The Star Wars people search app, composed as the app composes it: remote pages for a query,
/// each one caching the merged list so far under the query's key (`search:<query>`), with that
/// cache (30 days) as the fallback when the first page cannot be loaded.
private struct PeopleSearchApp {
    /// What the screen shows: the people so far, where they came from, and "load more" when the
    /// remote end has another page (never for cached results).
    struct Results: Sendable {
        let feed: LoadedFeed<Person>
        let loadMore: Paginated<Person>.LoadMore?
    }

    let cache: LocalSearchLoader<Person>
    private let pages: PaginatedSearchLoader<Person, URL>

    init(_ env: AppEnvironment) {
        let client = env.client
        let firstPage = env.url("/api/people/")
        cache = LocalSearchLoader(store: CacheLogKeyedFeedStore(log: env.log), currentDate: env.clock.function, policy: .search)
        pages = PaginatedSearchLoader(
            remote: { query, next in
                var components = URLComponents(url: firstPage, resolvingAgainstBaseURL: false)
                components?.queryItems = [URLQueryItem(name: "search", value: query)]
                let url = next ?? components?.url ?? firstPage
                let page = try await RemoteLoader(url: url, client: client, mapper: PeoplePageMapper.map).load()
                return (page.results, page.next)
            },
            cache: cache)
    }

    func search(_ query: String) async throws -> Results {
        let loadMore = Locked<Paginated<Person>.LoadMore?>(nil)
        let remote = AnyFeedLoader<Person>.remote { [pages] in
            let page = try await pages.load(query: query)
            loadMore.withLock { $0 = page.loadMore }
            return page.items
        }
        let feed = try await FeedLoaderWithFallbackComposite(primary: remote, fallback: cache.loader(for: query)).loadFeed()
        return Results(feed: feed, loadMore: loadMore.withLock { $0 })
    }
}

@Suite("People search app: paged search, query-keyed 30-day cache on the log", .timeLimit(.minutes(1)))
struct PeopleSearchAcceptanceTests {
    @Test
    func peopleSearch_onlineSearch_deliversTheFirstPageAndReplacesTheQueryCache() async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader]])
        env.clock.set(1, daysAfter: TestClock.start)
        env.serve(people(["darth": [[vader, maul]]]))

        let results = try await app.search("darth")

        #expect(results.feed == LoadedFeed(items: [vader, maul], source: .remote))
        #expect(results.loadMore == nil)
        #expect(try await app.cache.load(for: "darth") == [vader, maul])
        #expect(try env.loggedEvents()
            == LoggedEvent.save("search:darth", at: TestClock.start) + LoggedEvent.save("search:darth", at: env.clock.date))
    }

    @Test
    func peopleSearch_loadMore_deliversTheMergedListAndCachesIt() async throws {
        let env = try AppEnvironment(serving: people(["sky": [[luke], [anakin, shmi]]]))
        let app = PeopleSearchApp(env)
        let firstPage = try await app.search("sky")
        #expect(firstPage.feed == LoadedFeed(items: [luke], source: .remote))
        env.clock.set(0, daysAfter: TestClock.start, plusSeconds: 30)

        let loadMore = try #require(firstPage.loadMore)
        let secondPage = try await loadMore()

        #expect(secondPage.items == [luke, anakin, shmi])
        #expect(secondPage.loadMore == nil)
        #expect(try await app.cache.load(for: "sky") == [luke, anakin, shmi])
        #expect(try env.loggedEvents()
            == LoggedEvent.save("search:sky", at: TestClock.start) + LoggedEvent.save("search:sky", at: env.clock.date))
    }

    @Test
    func peopleSearch_offlineAfterLoadMore_deliversTheMergedListFromTheCache() async throws {
        let env = try AppEnvironment(serving: people(["sky": [[luke], [anakin, shmi]]]))
        let app = PeopleSearchApp(env)
        let loadMore = try #require(try await app.search("sky").loadMore)
        _ = try await loadMore()
        env.goOffline()

        let results = try await app.search("sky")

        #expect(results.feed == LoadedFeed(items: [luke, anakin, shmi], source: .cache(timestamp: TestClock.start)))
        #expect(results.loadMore == nil)
        #expect(try env.loggedEvents() == LoggedEvent.save("search:sky", at: TestClock.start) + LoggedEvent.save("search:sky", at: TestClock.start))
    }

    @Test
    func peopleSearch_twoQueries_areCachedUnderSeparateKeys() async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader, maul], "sky": [luke]])
        env.goOffline()

        #expect(try await app.search("darth").feed.items == [vader, maul])
        #expect(try await app.search("sky").feed.items == [luke])
        #expect(try env.loggedEvents()
            == LoggedEvent.save("search:darth", at: TestClock.start) + LoggedEvent.save("search:sky", at: TestClock.start))
    }

    @Test(arguments: Offline.allCases)
    func peopleSearch_offlineWithFreshCache_deliversCachedPeople(offline: Offline) async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader, maul]])
        env.clock.set(10, daysAfter: TestClock.start)
        env.goOffline(offline)

        let results = try await app.search("darth")

        #expect(results.feed == LoadedFeed(items: [vader, maul], source: .cache(timestamp: TestClock.start)))
        #expect(results.loadMore == nil)
        #expect(try env.loggedEvents() == LoggedEvent.save("search:darth", at: TestClock.start))
    }

    @Test
    func peopleSearch_offlineWithCacheOneSecondShortOfThirtyDaysOld_deliversCachedPeople() async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader]])
        env.clock.set(30, daysAfter: TestClock.start, plusSeconds: -1)
        env.goOffline()

        let results = try await app.search("darth")

        #expect(results.feed == LoadedFeed(items: [vader], source: .cache(timestamp: TestClock.start)))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:darth", at: TestClock.start))
    }

    @Test
    func peopleSearch_offlineWithCacheExactlyThirtyDaysOld_deliversNoUsableFeedError() async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader]])
        env.clock.set(30, daysAfter: TestClock.start)
        env.goOffline()

        let error = await caughtError { try await app.search("darth") }

        expectNoUsableFeed(error, remote: .connectivity, cache: .expired(timestamp: TestClock.start, maxAge: .days(30)))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:darth", at: TestClock.start))
    }

    @Test
    func peopleSearch_offlineWithCacheMoreThanThirtyDaysOld_deliversNoUsableFeedError() async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader]])
        env.clock.set(45, daysAfter: TestClock.start)
        env.goOffline(.invalidJSON)

        let error = await caughtError { try await app.search("darth") }

        expectNoUsableFeed(error, remote: .invalidData, cache: .expired(timestamp: TestClock.start, maxAge: .days(30)))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:darth", at: TestClock.start))
    }

    @Test
    func peopleSearch_offlineWithEmptyCacheForTheQuery_deliversNoUsableFeedErrorEvenWhenAnotherQueryIsCached() async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader]])
        env.goOffline()

        let error = await caughtError { try await app.search("sky") }

        expectNoUsableFeed(error, remote: .connectivity, cache: .empty)
        #expect(try env.loggedEvents() == LoggedEvent.save("search:darth", at: TestClock.start))
    }

    @Test
    func peopleSearch_validateCache_removesAnExpiredQueryCacheWithAnExpireEvent() async throws {
        let (env, app) = try await peopleSearchAppWithCache(of: ["darth": [vader]])
        env.clock.set(30, daysAfter: TestClock.start)

        try await app.cache.validateCache(for: "darth")

        env.goOffline()
        expectNoUsableFeed(await caughtError { try await app.search("darth") }, remote: .connectivity, cache: .empty)
        #expect(try env.loggedEvents() == LoggedEvent.save("search:darth", at: TestClock.start) + [
            .expire("search:darth", timestamp: TestClock.start, maxAge: days(30)),
        ])
    }

    // MARK: - Helpers

    /// The app, after online one-page searches at ``TestClock/start`` that cached `cached`
    /// (query → people), in query order.
    private func peopleSearchAppWithCache(of cached: [String: [Person]]) async throws -> (AppEnvironment, PeopleSearchApp) {
        let env = try AppEnvironment(serving: people(cached.mapValues { [$0] }))
        let app = PeopleSearchApp(env)
        for (query, results) in cached.sorted(by: { $0.key < $1.key }) {
            #expect(try await app.search(query).feed == LoadedFeed(items: results, source: .remote))
        }
        return (env, app)
    }
}

// MARK: - Sample payloads (contract: {count, next, previous, results: [{name, …}]})

private let luke = Person(name: "Luke Skywalker", height: "172", mass: "77", birthYear: "19BBY", gender: "male")
private let anakin = Person(name: "Anakin Skywalker", height: "188", mass: "84", birthYear: "41.9BBY", gender: "male")
private let shmi = Person(name: "Shmi Skywalker", height: "163", mass: "unknown", birthYear: "72BBY", gender: "female")
private let vader = Person(name: "Darth Vader", height: "202", mass: "136", birthYear: "41.9BBY", gender: "male")
private let maul = Person(name: "Darth Maul", height: "175", mass: "80", birthYear: "54BBY", gender: "male")

/// The server's handler for `GET /api/people/?search=<query>[&page=<n>]` answering page n of
/// `pages[query]` (or an empty result), with `next` pointing at page n + 1 when there is one.
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
        let results: [[String: Any]] = queryPages[number - 1].map {
            ["name": $0.name, "height": $0.height ?? "unknown", "mass": $0.mass ?? "unknown",
             "birth_year": $0.birthYear ?? "unknown", "gender": $0.gender ?? "n/a", "hair_color": "blond"]
        }
        return .json(jsonData([
            "count": queryPages.joined().count, "next": link(number + 1), "previous": link(number - 1), "results": results,
        ]))
    }
}
