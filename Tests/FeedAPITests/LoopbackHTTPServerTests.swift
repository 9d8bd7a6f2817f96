import FeedAPI
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

@Suite("LoopbackHTTPServer", .hangGuard)
struct LoopbackHTTPServerTests {
    @Test
    func start_listensOnLoopbackOnAnEphemeralPort() throws {
        let server = LoopbackHTTPServer()
        #expect(server.port == nil)
        let baseURL = try server.start()
        defer { server.stop() }
        let port = try #require(server.port)
        #expect(port > 0)
        #expect(baseURL.host == "127.0.0.1")
        #expect(baseURL.port == port)
        #expect(server.baseURL == baseURL)
    }

    @Test
    func start_twiceThrowsAlreadyStarted() throws {
        let server = LoopbackHTTPServer()
        try server.start()
        defer { server.stop() }
        #expect(throws: LoopbackHTTPServerError.alreadyStarted) { try server.start() }
    }

    @Test
    func stop_isSafeBeforeStartAndMoreThanOnce() throws {
        let server = LoopbackHTTPServer()
        server.stop()
        try server.start()
        server.stop()
        server.stop()
        #expect(throws: LoopbackHTTPServerError.alreadyStarted) { try server.start() }
    }

    @Test
    func routes_serveKnownPathsAndNotFoundOtherwiseIgnoringTheQuery() async throws {
        let server = LoopbackHTTPServer(routes: ["/feed": .json(#"{"items":[]}"#)])
        let baseURL = try server.start()
        defer { server.stop() }
        let client = CurlHTTPClient(userAgent: "cachelog-tests/1")

        let feedURL = try #require(URL(string: "/feed?page=2", relativeTo: baseURL))
        let (data, ok) = try await client.get(from: feedURL)
        #expect(ok.statusCode == 200)
        #expect(ok.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(data == json(#"{"items":[]}"#))

        let (_, missing) = try await client.get(from: baseURL.appendingPathComponent("nope"))
        #expect(missing.statusCode == 404)
    }

    @Test
    func requests_areRecordedInOrderWithTargetPathAndQuery() async throws {
        try await withServer({ _ in .status(204) }) { server, baseURL in
            let client = CurlHTTPClient(userAgent: "cachelog-tests/1")
            _ = try await client.get(from: baseURL.appendingPathComponent("first"))
            _ = try await client.get(from: try #require(URL(string: "/search?q=love%20one%20another&page=1", relativeTo: baseURL)))
            let requests = server.requests
            #expect(server.requestCount == 2)
            #expect(requests.map(\.path) == ["/first", "/search"])
            #expect(requests.map(\.target) == ["/first", "/search?q=love%20one%20another&page=1"])
            #expect(requests.last?.query == "q=love%20one%20another&page=1")
            #expect(requests.last?.queryValue("q") == "love one another")
            #expect(requests.last?.queryValue("missing") == nil)
            #expect(requests.last?.header("host") == "127.0.0.1:\(baseURL.port ?? 0)")
        }
    }

    @Test
    func setHandler_changesTheAnswerForLaterRequests() async throws {
        try await withServer({ _ in .json("online") }) { server, baseURL in
            let client = CurlHTTPClient(userAgent: "cachelog-tests/1")
            let (_, online) = try await client.get(from: baseURL)
            #expect(online.statusCode == 200)
            server.setHandler { _ in .status(500) }
            let (_, failing) = try await client.get(from: baseURL)
            #expect(failing.statusCode == 500)
        }
    }

    @Test
    func aDelayedResponseDoesNotBlockOtherConnections() async throws {
        try await withServer({ request in
            request.path == "/slow" ? HTTPResponse.json("slow").delayed(by: .seconds(600)) : .json("fast")
        }) { server, baseURL in
            let client = CurlHTTPClient(userAgent: "cachelog-tests/1")
            let slow = Task { try await client.get(from: baseURL.appendingPathComponent("slow")) }
            #expect(await server.waitForRequests(count: 1))
            let (data, _) = try await client.get(from: baseURL.appendingPathComponent("fast"))
            #expect(data == json("fast"))
            slow.cancel()
            _ = await caughtError { try await slow.value }
        }
    }

    @Test
    func stop_cutsShortADelayedResponseAndReleasesThePort() async throws {
        // Far longer than any wait for the request under load: only the stop ends it.
        let server = LoopbackHTTPServer { _ in HTTPResponse.json("late").delayed(by: .seconds(600)) }
        let baseURL = try server.start()
        let client = CurlHTTPClient(userAgent: "cachelog-tests/1")
        let pending = Task { try await client.get(from: baseURL) }
        #expect(await server.waitForRequests(count: 1))

        let port = try #require(server.port)
        #expect(listeningSockets(onPort: port) == 1)
        let clock = ContinuousClock()
        let stoppedAt = clock.now
        server.stop()
        #expect(clock.now - stoppedAt < .seconds(5))

        // The delayed connection was closed unanswered.
        let pendingError = await caughtError { try await pending.value }
        #expect(pendingError is HTTPClientError)

        // The port is released.
        #expect(listeningSockets(onPort: port) == 0)
    }

    @Test
    func stop_calledFromSeveralTasksAtOnceReturnsOnlyOnceStopped() async throws {
        // Far longer than any wait for the request under load: only the stop ends it.
        let server = LoopbackHTTPServer { _ in HTTPResponse.json("late").delayed(by: .seconds(600)) }
        let baseURL = try server.start()
        let client = CurlHTTPClient(userAgent: "cachelog-tests/1")
        let pending = Task { try await client.get(from: baseURL) }
        #expect(await server.waitForRequests(count: 1))
        let port = try #require(server.port)
        #expect(listeningSockets(onPort: port) == 1)

        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    server.stop()
                    #expect(listeningSockets(onPort: port) == 0)
                }
            }
        }
        _ = await caughtError { try await pending.value }
    }

    @Test
    func deinit_stopsTheServerAndReleasesThePort() async throws {
        var server: LoopbackHTTPServer? = LoopbackHTTPServer { _ in .json("up") }
        let port = try #require(try server?.start().port)
        #expect(listeningSockets(onPort: port) == 1)
        server = nil

        #expect(listeningSockets(onPort: port) == 0)
    }

    @Test
    func closeConnection_hangsUpWithoutAnAnswerButRecordsTheRequest() async throws {
        try await withServer({ _ in .closeConnection }) { server, baseURL in
            let error = await caughtError { try await CurlHTTPClient(userAgent: "cachelog-tests/1").get(from: baseURL) }
            #expect(error is HTTPClientError)
            #expect(server.requestCount >= 1)
        }
    }

    @Test
    func waitForRequests_returnsFalseAfterTheTimeout() async throws {
        try await withServer({ _ in .notFound }) { server, _ in
            #expect(await server.waitForRequests(count: 1, timeout: .milliseconds(50)) == false)
        }
    }

    @Test
    func eachServerHasItsOwnPort() throws {
        let first = LoopbackHTTPServer()
        let second = LoopbackHTTPServer()
        try first.start()
        defer { first.stop() }
        try second.start()
        defer { second.stop() }
        #expect(first.port != second.port)
    }
}
