@testable import CacheLogKit
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// Overlapping loads of one thing share one request and one save, through a real loopback
/// server and a real database. The server holds its answer at a gate until every caller waits,
/// so that the loads overlap however slowly a loaded machine starts them.
@Suite("CacheClient: overlapping loads share one", .hangGuard)
struct CoalescingTests {
    /// Runs `callers` loads at once against a server that answers only once all of them wait,
    /// and returns their results (or errors) and the requests the server saw.
    private func overlapping<T: Sendable>(
        _ world: ClientWorld, _ client: CacheClient, key: String, routes: [String: HTTPResponse], holding path: String,
        callers: Int = 50, _ load: @escaping @Sendable () async throws -> T
    ) async throws -> [Result<T, any Error>] {
        let answer = Gate()
        defer { answer.open() }
        world.server.setHandler { request in
            if request.path == path { answer.wait() }
            return routes[request.path] ?? HTTPResponse(status: 404)
        }
        return try await withThrowingTaskGroup(of: Result<T, any Error>.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    do { return .success(try await load()) } catch { return .failure(error) }
                }
            }
            try #require(await world.server.waitForRequests(count: 1))
            #expect(try await eventually { client.inFlight.callers(of: key) == callers }, "\(client.inFlight.callers(of: key)) callers")
            answer.open()
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    private func puts(_ client: CacheClient) throws -> Int {
        try client.existingLog()?.events(EventQuery()).filter { item in
            if case .event(let event) = item { return event.kind == .put }
            return false
        }.count ?? 0
    }

    @Test func fiftyRemoteFirstLoadsOfOneFeed_sendOneRequest_makeOneSave_andEachGetsTheItems() async throws {
        let world = try ClientWorld()
        let client = try world.client()
        let films = client.feed("films", at: world.url("/films.json"), contract: .films)

        let results = try await overlapping(world, client, key: "films", routes: ["/films.json": .json(Bodies.films)], holding: "/films.json") {
            try await films.load()
        }

        let loads = try results.map { try $0.get() }
        #expect(loads.allSatisfy { $0.source == .remote && $0.cacheSave == .saved && $0.items.count == 2 })
        #expect(world.server.requestCount == 1)
        #expect(try puts(client) == 1, "one save")
        #expect(client.inFlight.isIdle)
    }

    @Test func fiftyCacheFirstLoadsOnAnEmptyCache_sendOneRequest() async throws {
        let world = try ClientWorld()
        let client = try world.client()
        let genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)

        let results = try await overlapping(world, client, key: "genres", routes: ["/genres.json": .json(Bodies.genres)], holding: "/genres.json") {
            try await genres.load()
        }

        #expect(try results.map { try $0.get().items.map(\.name) }.allSatisfy { $0 == ["Comedy", "News"] })
        #expect(world.server.requestCount == 1)
        #expect(try puts(client) == 1)
    }

    @Test func fiftyLoadsOfOneImage_sendOneRequest() async throws {
        let world = try ClientWorld()
        let client = try world.client()
        let url = world.url("/poster.png")
        let routes = ["/poster.png": HTTPResponse(status: 200, body: Data([1, 2, 3]))]

        let results = try await overlapping(world, client, key: "image:\(url.absoluteString)", routes: routes, holding: "/poster.png") {
            try await client.image(at: url).load()
        }

        #expect(try results.map { try $0.get().items }.allSatisfy { $0 == [Data([1, 2, 3])] })
        #expect(world.server.requestCount == 1)
    }

    @Test func overlappingLoadMoreCalls_askForTheNextPageOnce_andAppendItOnce() async throws {
        let world = try ClientWorld()
        let next = world.baseURL.absoluteString + "/people-sky-2.json"
        let routes: [String: HTTPResponse] = [
            "/people-sky.json": .json(Bodies.people(["Luke Skywalker"], next: next, base: world.baseURL)),
            "/people-sky-2.json": .json(Bodies.people(["Anakin Skywalker"], next: nil, base: world.baseURL, idBase: 11)),
        ]
        world.serve(routes)
        let client = try world.client()
        let sky = client.search("sky", at: world.template("/people-{query}.json"), contract: .people)
        _ = try await sky.load()

        let results = try await overlapping(world, client, key: sky.key, routes: routes, holding: "/people-sky-2.json", callers: 10) {
            try await sky.loadMore()
        }

        #expect(try results.map { try $0.get().items.map(\.name) }.allSatisfy { $0 == ["Luke Skywalker", "Anakin Skywalker"] })
        #expect(world.server.requests.map(\.path) == ["/people-sky.json", "/people-sky-2.json"])
    }

    /// Two loads of the films waiting for one request, which the server holds until `answer` opens.
    private func twoCallersWaiting() async throws
        -> (ClientWorld, CacheClient, (Task<CacheLoad<Film>, any Error>, Task<CacheLoad<Film>, any Error>), Gate) {
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films)])
        let client = try world.client()
        let films = client.feed("films", at: world.url("/films.json"), contract: .films)
        let answer = Gate()
        world.server.setHandler { _ in
            answer.wait()
            return .json(Bodies.films)
        }
        let loads = (Task { try await films.load() }, Task { try await films.load() })
        try #require(await world.server.waitForRequests(count: 1))
        #expect(try await eventually { client.inFlight.callers(of: "films") == 2 })
        return (world, client, loads, answer)
    }

    @Test func aCancelledCaller_stopsWaitingAtOnce_andTheOthersStillGetTheSave() async throws {
        let (world, _, films, answer) = try await twoCallersWaiting()
        defer { answer.open() }
        let (staying, leaving) = (films.0, films.1)
        leaving.cancel()
        // It ends while the server still holds the answer: it does not wait for the others.
        let left = await caughtError { try await leaving.value }
        #expect(left is CancellationError, "\(String(describing: left))")
        answer.open()

        let stayed = try await staying.value
        #expect(stayed.cacheSave == .saved)
        #expect(world.server.requestCount == 1)
    }

    @Test func cancellingEveryCaller_cancelsTheRequest_andTheNextLoadStartsAfresh() async throws {
        let (world, client, loads, answer) = try await twoCallersWaiting()
        defer { answer.open() }
        let (first, second) = loads
        first.cancel()
        second.cancel()
        #expect(await caughtError { try await first.value } is CancellationError)
        #expect(await caughtError { try await second.value } is CancellationError)
        // The shared load ends while the server still holds its answer: only the cancellation
        // of its request can end it.
        #expect(try await eventually { client.inFlight.isIdle })
        #expect(try client.existingLog() == nil, "a cancelled load saved")

        world.serve(["/films.json": .json(Bodies.films)])
        let fresh = try await client.feed("films", at: world.url("/films.json"), contract: .films).load()
        #expect(fresh.cacheSave == .saved && world.server.requestCount == 2)
    }

    @Test func loadsOfOneKeyWithOtherSettings_doNotShare() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let client = try world.client()
        let cacheFirst = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        var remoteFirst = cacheFirst
        remoteFirst.strategy = .remoteFirst
        let answer = Gate()
        defer { answer.open() }
        world.server.setHandler { _ in
            answer.wait()
            return .json(Bodies.genres)
        }

        async let one = cacheFirst.load()
        async let other = remoteFirst.load()
        #expect(await world.server.waitForRequests(count: 2), "each setting makes its own request")
        answer.open()
        _ = try await (one, other)
    }

    /// A load under way for a max age the cache is too old for must not hold up, nor answer, a
    /// load of a longer max age that the cache satisfies: max age is part of what a load is.
    @Test func aSevenDayLoad_whileAOneDayLoadOfAThreeDayOldCacheWaitsForTheRemote_isAnsweredByTheCacheAtOnce() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        // No memory tier: it would answer the seven-day load before it reached the coalescer.
        let client = try world.client(CacheClient.Options(memoryLimit: 0))
        let genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        _ = try await genres.load()
        world.days(3)
        var oneDay = genres
        oneDay.maxAge = .days(1)
        var sevenDays = genres
        sevenDays.maxAge = .days(7)
        let answer = Gate()
        defer { answer.open() }
        world.server.setHandler { _ in
            answer.wait()
            return .json(Bodies.genres)
        }

        let waiting = Task { try await oneDay.load() }
        try #require(await world.server.waitForRequests(count: 2))
        let cached = try await sevenDays.load()
        guard case .cache = cached.source else {
            Issue.record("the seven-day load was answered by \(cached.source)")
            return
        }
        #expect(cached.items.count == 2)
        #expect(world.server.requestCount == 2, "the seven-day load asked the remote")
        answer.open()
        #expect(try await waiting.value.source == .remote)
    }
}
