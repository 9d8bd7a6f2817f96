import CacheLogKit
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// The Bible-verse semantic search app, as an app writes it with the library: each query a
/// search of the client (`search:verses:QUERY`), remote first, its numbered pages cached 30 days
/// and the cache the fallback.
private struct VerseSearchApp {
    let env: AppEnvironment

    /// The search for `query`. A new value each time: nothing carries from one call to the next
    /// but the database.
    func search(_ query: String) -> SearchResource<Verse> {
        env.cache.search(query, at: env.template("/search?q={query}&page={page}"), contract: .verses)
    }
}

@Suite("Verse search app: CacheClient searches, query-keyed 30-day cache on the log", .hangGuard)
struct VerseSearchAcceptanceTests {
    @Test
    func verseSearch_onlineSearch_deliversRemoteVersesAndReplacesTheQueryCache() async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["love one another": [john13_34]])
        env.clock.set(1, daysAfter: TestClock.start)
        env.serve(verses(["love one another": [[john13_34, john15_12]]]))

        let loaded = try await app.search("love one another").load()

        #expect(loaded.items == [john13_34, john15_12])
        #expect(loaded.source == .remote && loaded.cacheSave == .saved && loaded.timestamp == env.clock.date)
        #expect(loaded.key == "search:verses:love one another")
        #expect(try await app.search("love one another").cacheOnly.load().items == [john13_34, john15_12])
        #expect(try env.loggedEvents()
            == LoggedEvent.save("search:verses:love one another", at: TestClock.start)
            + LoggedEvent.save("search:verses:love one another", at: env.clock.date))
    }

    @Test
    func verseSearch_loadMore_requestsTheNextPageAndCachesTheMergedListAsOldAsItsFirstPage() async throws {
        let env = try AppEnvironment(serving: verses(["love": [[john13_34], [john15_12]]]))
        let app = VerseSearchApp(env: env)
        let first = try await app.search("love").load()
        #expect(first.items == [john13_34] && first.more == true)
        env.clock.set(2, daysAfter: TestClock.start)

        let second = try await app.search("love").loadMore()
        let last = try await app.search("love").loadMore()

        #expect(env.server.requests.map { $0.queryValue("page") } == ["1", "2", "3"])
        #expect(env.server.requests.allSatisfy { $0.queryValue("q") == "love" })
        #expect(second.items == [john13_34, john15_12] && second.more == true && second.cacheSave == .saved)
        #expect(second.timestamp == TestClock.start && second.pages == [TestClock.start, env.clock.date])
        #expect(last.items == [john13_34, john15_12] && last.more == false, "an empty page ends the search")
        let save = LoggedEvent.save("search:verses:love", at: TestClock.start)
        #expect(try env.loggedEvents() == save + save + save, "each page's list is stamped with the first page's time")
    }

    @Test
    func verseSearch_twoQueries_areCachedUnderSeparateKeys() async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["love one another": [john13_34], "peace": [john14_27]])
        env.goOffline()

        #expect(try await app.search("love one another").load().items == [john13_34])
        #expect(try await app.search("peace").load().items == [john14_27])
        #expect(try env.loggedEvents()
            == LoggedEvent.save("search:verses:love one another", at: TestClock.start)
            + LoggedEvent.save("search:verses:peace", at: TestClock.start))
    }

    @Test(arguments: Offline.allCases)
    func verseSearch_offlineWithFreshCache_deliversCachedVerses(offline: Offline) async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["peace": [john14_27]])
        env.clock.set(10, daysAfter: TestClock.start)
        env.goOffline(offline)

        let loaded = try await app.search("peace").load()

        #expect(loaded.items == [john14_27] && loaded.source == .cache(timestamp: TestClock.start))
        #expect(loaded.cacheSave == .notAttempted)
        #expect((loaded.remoteFailure as? RemoteLoaderError) == (offline == .connectionRefused ? .connectivity : .invalidData))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:verses:peace", at: TestClock.start))
    }

    @Test
    func verseSearch_offlineWithCacheOneSecondShortOfThirtyDaysOld_deliversCachedVerses() async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["peace": [john14_27]])
        env.clock.set(30, daysAfter: TestClock.start, plusSeconds: -1)
        env.goOffline()

        let loaded = try await app.search("peace").load()

        #expect(loaded.items == [john14_27] && loaded.source == .cache(timestamp: TestClock.start))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:verses:peace", at: TestClock.start))
    }

    @Test
    func verseSearch_offlineWithCacheExactlyThirtyDaysOld_deliversNoUsableDataError() async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["peace": [john14_27]])
        env.clock.set(30, daysAfter: TestClock.start)
        env.goOffline()

        let error = await caughtError { try await app.search("peace").load() }

        expectNoUsableData(
            error, key: "search:verses:peace", remote: .connectivity, cache: .expired(timestamp: TestClock.start, maxAge: .days(30)))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:verses:peace", at: TestClock.start))
    }

    @Test
    func verseSearch_offlineWithCacheMoreThanThirtyDaysOld_deliversNoUsableDataError() async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["peace": [john14_27]])
        env.clock.set(30, daysAfter: TestClock.start, plusSeconds: 1)
        env.goOffline(.serverError)

        let error = await caughtError { try await app.search("peace").load() }

        expectNoUsableData(
            error, key: "search:verses:peace", remote: .invalidData, cache: .expired(timestamp: TestClock.start, maxAge: .days(30)))
        #expect(try env.loggedEvents() == LoggedEvent.save("search:verses:peace", at: TestClock.start))
    }

    @Test
    func verseSearch_offlineWithEmptyCacheForTheQuery_deliversNoUsableDataErrorEvenWhenAnotherQueryIsCached() async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["peace": [john14_27]])
        env.goOffline()

        let error = await caughtError { try await app.search("love one another").load() }

        expectNoUsableData(error, key: "search:verses:love one another", remote: .connectivity, cache: .empty)
        #expect(try env.loggedEvents() == LoggedEvent.save("search:verses:peace", at: TestClock.start))
    }

    @Test
    func verseSearch_validate_expiresOnlyTheExpiredQueryCacheWithAnExpireEvent() async throws {
        let (env, app) = try await verseSearchAppWithCache(of: ["peace": [john14_27]])
        env.clock.set(10, daysAfter: TestClock.start)
        let tenDaysLater = env.clock.date
        env.serve(verses(["love one another": [[john13_34]]]))
        _ = try await app.search("love one another").load()
        env.clock.set(30, daysAfter: TestClock.start)

        let outcomes = try await env.cache.validate()

        #expect(outcomes.map(\.key) == ["search:verses:love one another", "search:verses:peace"])
        #expect(outcomes.map(\.outcome) == [.fresh, .expired])
        let peace = await caughtError { try await app.search("peace").cacheOnly.load() }
        #expect(((peace as? NoUsableDataError)?.cacheError as? CacheUnavailableError)
                == .gone(.expired(at: env.clock.date, timestamp: TestClock.start, maxAge: days(30))), "\(String(describing: peace))")
        #expect(try await app.search("love one another").cacheOnly.load().items == [john13_34])
        #expect(try env.loggedEvents()
            == LoggedEvent.save("search:verses:peace", at: TestClock.start)
            + LoggedEvent.save("search:verses:love one another", at: tenDaysLater)
            + [.expire("search:verses:peace", timestamp: TestClock.start, maxAge: days(30))])
    }

    // MARK: - Helpers

    /// The app, after online searches at ``TestClock/start`` that cached `cached` (query → verses,
    /// one page each), in query order.
    private func verseSearchAppWithCache(of cached: [String: [Verse]]) async throws -> (AppEnvironment, VerseSearchApp) {
        let env = try AppEnvironment(serving: verses(cached.mapValues { [$0] }))
        let app = VerseSearchApp(env: env)
        for (query, results) in cached.sorted(by: { $0.key < $1.key }) {
            let loaded = try await app.search(query).load()
            #expect(loaded.items == results && loaded.source == .remote && loaded.cacheSave == .saved)
        }
        return (env, app)
    }
}

// MARK: - Sample payloads (contract: a top-level array of {scripture, distance, text} a page)

private let john13_34 = Verse(
    scripture: "John 13:34", distance: 0.12,
    text: "A new commandment I give unto you, That ye love one another; as I have loved you.")
private let john15_12 = Verse(
    scripture: "John 15:12", distance: 0.18, text: "This is my commandment, That ye love one another, as I have loved you.")
private let john14_27 = Verse(
    scripture: "John 14:27", distance: 0.09, text: "Peace I leave with you, my peace I give unto you.")

/// The server's handler for `GET /search?q=<query>&page=<n>` answering page n of `pages[query]`,
/// and no verses past the last page (or for another query).
private func verses(_ pages: [String: [[Verse]]]) -> LoopbackHTTPServer.Handler {
    let bodies = pages.mapValues { pages in
        pages.map { verses in jsonData(verses.map { ["scripture": $0.scripture, "distance": $0.distance, "text": $0.text] as [String: Any] }) }
    }
    return { request in
        guard request.path == "/search" else { return .notFound }
        let queryPages = bodies[request.queryValue("q") ?? ""] ?? []
        let number = Int(request.queryValue("page") ?? "1") ?? 1
        return .json(queryPages.indices.contains(number - 1) ? queryPages[number - 1] : Data("[]".utf8))
    }
}
