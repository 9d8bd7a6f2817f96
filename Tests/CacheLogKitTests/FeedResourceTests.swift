import CacheLogKit
import Foundation
import LoopbackHTTP
import MetricsTestKit
import TestSupport
import Testing

/// The feeds of the entry point, through a real loopback server and a real database.
@Suite("CacheClient: feeds", .hangGuard)
struct FeedResourceTests {
    @Test func load_savesTheRemotesItems_andServesThemWhenTheRemoteFails() async throws {
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films)])
        let films = try world.client().feed("films", at: world.url("/films.json"), contract: .films)

        let online = try await films.load()
        #expect(online.source == .remote && online.isCached && online.items.map(\.title) == ["Castle in the Sky", "My Neighbor Totoro"])

        world.serve(["/films.json": HTTPResponse(status: 500)])
        world.days(2)
        let offline = try await films.load()
        #expect(offline.source == .cache(timestamp: online.timestamp))
        #expect(offline.items == online.items)
        #expect((offline.remoteFailure as? RemoteLoaderError) == .invalidData, "the cache served because the remote failed, and says why")
    }

    @Test func load_deliversNoItemsOnCacheExactlyMaxAgeOld_sayingBothCauses() async throws {
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films)])
        let films = try world.client().feed("films", at: world.url("/films.json"), contract: .films)
        _ = try await films.load()

        world.serve(["/films.json": HTTPResponse(status: 500)])
        world.days(7)
        let error = await #expect(throws: NoUsableDataError.self) { try await films.load() }
        #expect(error?.description == "no usable data for films: remote sent invalid data: HTTP status 500, not 200; cache expired (cached 2026-12-01T10:00:00Z, 7d old, max age 7d)")
    }

    @Test func aClientOnADirectoryWithNoDatabase_createsNothingUntilASave() async throws {
        let world = try ClientWorld()
        let dead = try DeadPort()
        let client = try world.client()

        await #expect(throws: NoUsableDataError.self) {
            try await client.feed("films", at: dead.url("/films.json"), contract: .films).load()
        }
        #expect(try await client.validate().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: world.path), "a load that saved nothing created no database")

        world.serve(["/films.json": .json(Bodies.films)])
        _ = try await client.feed("films", at: world.url("/films.json"), contract: .films).load()
        #expect(FileManager.default.fileExists(atPath: world.path + "/data.mdb"))
    }

    @Test func cacheFirst_servesAFreshCacheWithoutARequest() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let genres = try world.client().feed("genres", at: world.url("/genres.json"), contract: .genres)
        _ = try await genres.load()
        world.days(6)

        let cached = try await genres.load()

        #expect(cached.source != .remote)
        #expect(world.server.requestCount == 1)
    }

    @Test func cacheFirst_answeredByTheRemote_reportsNoRemoteFailure() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        var genres = try world.client().feed("genres", at: world.url("/genres.json"), contract: .genres)
        genres.strategy = .cacheFirst

        let first = try await genres.load()                 // nothing cached: the remote answers
        #expect(first.source == .remote && first.isCached)
        #expect(first.remoteFailure == nil, "the remote answered: \(String(describing: first.remoteFailure))")

        world.days(8)                                       // expired: the remote answers again
        let refreshed = try await genres.load()
        #expect(refreshed.source == .remote && refreshed.remoteFailure == nil, "\(String(describing: refreshed.remoteFailure))")
    }

    @Test func cacheOnly_neverAsksTheRemote_andFailsWithTheCachesReasonAlone() async throws {
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films)])
        var films = try world.client().feed("films", at: world.url("/films.json"), contract: .films)
        films.strategy = .cacheOnly

        let error = await #expect(throws: NoUsableDataError.self) { try await films.load() }
        #expect(error?.description == "no usable data for films: no cache")
        #expect(world.server.requestCount == 0)
    }

    @Test func cacheThenRemote_yieldsTheStaleCacheAtOnce_thenTheRemotesItems_countingTheStaleServe() async throws {
        let metrics = TestMetrics()
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films)])
        let films = try world.client(CacheClient.Options(metrics: metrics)).feed("films", at: world.url("/films.json"), contract: .films)
        _ = try await films.load()
        world.days(8)

        var loads: [CacheLoad<Film>] = []
        for try await load in films.cacheThenRemote() { loads.append(load) }

        #expect(loads.map(\.isFresh) == [false, true])
        #expect(loads.map(\.source) == [.cache(timestamp: Date(timeIntervalSince1970: 1_796_119_200)), .remote])
        #expect(loads.last?.isCached == true)
        #expect(try metrics.expectCounter("cachelog_stale_served_total", [("contract", "films")]).totalValue == 1)
        #expect(try metrics.expectCounter("cachelog_saves_total", [("contract", "films")]).totalValue == 2)
    }

    @Test func cacheThenRemote_withNothingCachedAndTheRemoteDown_endsWithNoUsableData() async throws {
        let world = try ClientWorld()
        let dead = try DeadPort()
        let films = try world.client().feed("films", at: dead.url("/films.json"), contract: .films)

        await #expect(throws: NoUsableDataError.self) {
            for try await _ in films.cacheThenRemote() {}
        }
    }

    @Test func metrics_countHitsMissesAndRevalidations_byContractNeverByKey() async throws {
        let metrics = TestMetrics()
        let world = try ClientWorld(routes: [
            "/genres.json": HTTPResponse(status: 200, headers: [HTTPHeader("ETag", "\"g1\"")], body: Data(Bodies.genres.utf8)),
        ])
        let client = try world.client(CacheClient.Options(metrics: metrics))
        let genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        _ = try await genres.load()                       // a miss: cache first, nothing cached
        world.days(1)
        _ = try await genres.load()                       // a hit
        world.serve(["/genres.json": HTTPResponse(status: 304)])
        world.days(7)
        let revalidated = try await genres.load()         // expired: a miss, then a 304

        #expect(revalidated.revalidated)
        let dimensions = [("contract", "genres")]
        #expect(try metrics.expectCounter("cachelog_cache_hits_total", dimensions).totalValue == 1)
        #expect(try metrics.expectCounter("cachelog_cache_misses_total", dimensions).totalValue == 2)
        #expect(try metrics.expectCounter("cachelog_revalidations_total", dimensions).totalValue == 1)
        #expect(try metrics.expectTimer("cachelog_remote_request_duration", dimensions).values.count == 2)
        #expect(metrics.counters.allSatisfy { counter in counter.dimensions.map(\.0) == ["contract"] })
    }

    /// A load that began first and finished last delivers its items but saves nothing, a load
    /// that began later having saved meanwhile: it counts as a failed save, never as a save.
    @Test func metrics_countASaveOnceWhenItLands_andASupersededSaveAsFailedNotSaved() async throws {
        let metrics = TestMetrics()
        let world = try ClientWorld()
        let client = try world.client(CacheClient.Options(metrics: metrics))
        let answer = Gate()
        defer { answer.open() }
        world.server.setHandler { request in
            if request.path == "/slow.json" { answer.wait() }
            return .json(Bodies.films)
        }

        async let older = client.feed("films", at: world.url("/slow.json"), contract: .films).load()
        try #require(await world.server.waitForRequests(count: 1), "the slow load never asked")
        let newer = try await client.feed("films", at: world.url("/films.json"), contract: .films).load()
        answer.open()
        let refused = try await older

        #expect(newer.cacheSave == .saved)
        #expect(refused.cacheSave.newerCache?.timestamp == newer.timestamp)
        #expect(try client.log().entry("films")?.timestamp == newer.timestamp)
        let dimensions = [("contract", "films")]
        #expect(try metrics.expectCounter("cachelog_saves_total", dimensions).totalValue == 1)
        #expect(try metrics.expectCounter("cachelog_failed_saves_total", dimensions).totalValue == 1)
    }

    @Test func metrics_countEachCacheValidationExpires_once_andNoneItKeeps() async throws {
        let metrics = TestMetrics()
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films), "/genres.json": .json(Bodies.genres)])
        let client = try world.client(CacheClient.Options(metrics: metrics))
        _ = try await client.feed("films", at: world.url("/films.json"), contract: .films).load()
        var genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        genres.maxAge = .days(30)
        _ = try await genres.load()
        world.days(8)

        // A dry run expires nothing, so it counts nothing.
        #expect(try await client.validate(dryRun: true).map(\.outcome) == [.expired, .fresh])
        #expect(metrics.counters.filter { $0.label == "cachelog_expires_total" }.allSatisfy { $0.totalValue == 0 })
        #expect(try await client.validate().map(\.outcome) == [.expired, .fresh])
        // Films is gone: a second validation has nothing of it to expire.
        #expect(try await client.validate().map(\.outcome) == [.fresh])
        let expires = metrics.counters.filter { $0.label == "cachelog_expires_total" }
        #expect(expires.map { $0.dimensions.map(\.1) } == [["films"]])
        #expect(expires.map(\.totalValue) == [1])
    }

    /// The mark is what lets a validation that knows nothing of the app decode a payload, and
    /// delete it when it does not decode: only the package's own contracts may carry it.
    @Test func save_underThePackagesOwnContract_recordsItsMark_andUnderAnAppsContractOfTheSameName_doesNot() async throws {
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films)])
        let client = try world.client()
        let appsFilms = FeedContract<Data>(name: "films", coder: .bytes) { data, _ in [data] }
        _ = try await client.feed("films", at: world.url("/films.json"), contract: .films).load()
        _ = try await client.feed("my-films", at: world.url("/films.json"), contract: appsFilms).load()

        let puts = try client.log().events(EventQuery(kinds: [.put])).compactMap { if case .event(let event) = $0 { event } else { nil } }
        try #require(puts.map(\.key) == ["films", "my-films"])
        #expect(puts[0].metadata["contract"] == "films")
        #expect(puts[0].metadata["contract-by"] == "cachelog")
        #expect(puts[1].metadata["contract"] == "films")
        #expect(puts[1].metadata["contract-by"] == nil)
    }

    @Test func oneClock_stampsTheSaveAndTheEventItWasRecordedAs() async throws {
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films)])
        let client = try world.client()
        world.days(3)
        _ = try await client.feed("films", at: world.url("/films.json"), contract: .films).load()

        let put = try client.log().events(EventQuery(kinds: [.put])).compactMap { if case .event(let event) = $0 { event } else { nil } }.first
        #expect(put?.timestamp == world.clock.date)
        #expect(put?.recordedAt == world.clock.date)
    }

    @Test func retries_invalidData_waitingLongerBeforeEachRetry() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json("not json")])
        var genres = try world.client().feed("genres", at: world.url("/genres.json"), contract: .genres)
        genres.backoff = RetryBackoff(initial: .milliseconds(20), maximum: .milliseconds(40))
        let started = ContinuousClock.now

        await #expect(throws: NoUsableDataError.self) { try await genres.load() }

        #expect(world.server.requestCount == 3, "the genres app retries invalid data twice")
        #expect(ContinuousClock.now - started >= .milliseconds(60), "waited 20 ms, then 40 ms")
    }

    @Test func aSaveNeverReplacesANewerCache_theOlderLoadLearnsItsItemsWereNotCached() async throws {
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films)])
        let log = try EventLog(path: world.path, options: EventLog.Options(durability: .unsynced, clock: world.clock.function))
        let slow = CacheClient(log: log).feed("films", at: world.url("/slow.json"), contract: .films)
        let answer = Gate()
        defer { answer.open() }
        world.server.setHandler { request in
            if request.path == "/slow.json" { answer.wait() }
            return .json(Bodies.films)
        }

        // The slow load begins first (its items are stamped at its start, before its request);
        // a later one lands first; only then does the slow one get its answer.
        async let older = slow.load()
        try #require(await world.server.waitForRequests(count: 1), "the slow load never asked")
        world.clock.advance(60)
        let newer = try await CacheClient(log: log).feed("films", at: world.url("/films.json"), contract: .films).load()
        answer.open()
        let refused = try await older

        #expect(newer.isCached)
        #expect(refused.cacheSave.newerCache?.timestamp == newer.timestamp)
        #expect(!refused.isCached)
        #expect(try log.entry("films")?.timestamp == newer.timestamp)
    }

    /// As two processes whose clocks disagree: the first load begins (its request waits at a
    /// gate), the second begins later, on a clock two days behind, and lands first. The first
    /// lands last and keeps its hands off the second's cache, although its stamp is the later
    /// one: which load is newer is the log's order, not what either clock said.
    @Test func aLoadThatBeganFirstAndLandsLast_isSuperseded_whenTheLaterLoadsClockIsTwoDaysBehind() async throws {
        try await expectTheFirstBegunLoadSuperseded(laterLoadsClock: -2 * 86_400)
    }

    /// The same with the later load's clock two days ahead: its cache is stamped in the future of
    /// the first load's clock, which must not make the first load's save count as the newer one.
    @Test func aLoadThatBeganFirstAndLandsLast_isSuperseded_whenTheLaterLoadsClockIsTwoDaysAhead() async throws {
        try await expectTheFirstBegunLoadSuperseded(laterLoadsClock: 2 * 86_400)
    }

    /// A load that began after another had landed replaces its cache, even on a clock that says it
    /// began a minute before that cache was stamped (and had passed that stamp when it saved).
    @Test func aLoadThatBeganAfterAnotherLanded_replacesItsCache_evenOnAClockThatSaysItBeganEarlier() async throws {
        let world = try ClientWorld()
        let client = try world.client()
        let began = world.clock.date
        let clock = world.clock
        world.server.setHandler { request in
            guard request.path == "/one.json" else { return .json(Bodies.films) }
            clock.set(began + 10)
            return .json(Self.oneFilm)
        }
        _ = try await client.feed("films", at: world.url("/films.json"), contract: .films).load()
        world.clock.set(began - 60)

        let later = try await client.feed("films", at: world.url("/one.json"), contract: .films).load()

        #expect(later.cacheSave == .saved)
        #expect(try client.log().entry("films")?.timestamp == began - 60)
    }

    static let oneFilm = """
        [{"id":"0440483e-ca0e-4120-8c50-4c8cd9b965d6","title":"Princess Mononoke","description":"Ashitaka","image":"https://example.com/mononoke.jpg","url":"https://example.com/films/0440483e"}]
        """

    /// One client, its clock moved as two processes' clocks would read: the first load begins at
    /// the world's date; the second runs on a clock `offset` from it; the first saves on its own.
    private func expectTheFirstBegunLoadSuperseded(laterLoadsClock offset: TimeInterval) async throws {
        let world = try ClientWorld()
        let client = try world.client()
        let answer = Gate()
        defer { answer.open() }
        world.server.setHandler { request in
            if request.path == "/slow.json" {
                answer.wait()
                return .json(Bodies.films)
            }
            return .json(Self.oneFilm)
        }
        let began = world.clock.date

        async let first = client.feed("films", at: world.url("/slow.json"), contract: .films).load()
        try #require(await world.server.waitForRequests(count: 1), "the first load never asked")
        world.clock.set(began + offset)
        let second = try await client.feed("films", at: world.url("/one.json"), contract: .films).load()
        world.clock.set(began)
        answer.open()
        let refused = try await first

        #expect(second.cacheSave == .saved && second.timestamp == began + offset)
        #expect(refused.cacheSave.newerCache?.timestamp == began + offset)
        #expect(!refused.isCached && refused.items.count == 2)
        let live = try #require(try client.log().retrieve("films"))
        #expect(live.timestamp == began + offset)
        #expect(live.payload.contains(Data("Mononoke".utf8)))
    }
}
