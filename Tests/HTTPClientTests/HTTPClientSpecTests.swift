import FeedAPI
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// What every HTTPClient the package ships does, against a real HTTP server on 127.0.0.1.
@Suite("HTTPClient spec", .hangGuard)
struct HTTPClientSpecTests {
    @Test(arguments: Client.allCases)
    func get_deliversBodyAndResponseForAnyStatus(client kind: Client) async throws {
        try await withServer({ _ in HTTPResponse(status: 418, headers: [HTTPHeader("X-Test", "yes")], body: json("teapot")) }) { server, baseURL in
            let (data, response) = try await kind.make().get(from: baseURL.appendingPathComponent("tea"))
            #expect(response.statusCode == 418)
            #expect(response.value(forHTTPHeaderField: "X-Test") == "yes")
            #expect(data == json("teapot"))
            #expect(server.requests.map(\.method) == ["GET"])
            #expect(server.requests.map(\.path) == ["/tea"])
        }
    }

    @Test(arguments: Client.allCases)
    func get_followsRedirects_andDeliversTheLastResponse(client kind: Client) async throws {
        try await withServer({ request in
            request.path == "/old" ? HTTPResponse(status: 301, headers: [HTTPHeader("Location", "/new")]) : .json("[1]")
        }) { server, baseURL in
            let (data, response) = try await kind.make().get(from: baseURL.appendingPathComponent("old"))
            #expect(response.statusCode == 200)
            #expect(response.url == baseURL.appendingPathComponent("new"))
            #expect(data == json("[1]"))
            #expect(server.requests.map(\.path) == ["/old", "/new"])
        }
    }

    @Test(arguments: Client.allCases)
    func get_refusesANonHTTPURLWithoutRequestingIt(client kind: Client) async throws {
        let url = URL(fileURLWithPath: "/etc/hostname")
        let error = await caughtError { try await kind.make().get(from: url) }
        #expect(error as? HTTPClientError == .unsupportedURL(url))
    }

    @Test(arguments: Client.allCases)
    func get_deliversTransportErrorWhenNothingListens(client kind: Client) async throws {
        let port = try DeadPort()
        let error = await caughtError { try await kind.make().get(from: port.url()) }
        guard case .transport? = error as? HTTPClientError else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
    }

    @Test(arguments: Client.allCases)
    func get_deliversTransportErrorWhenTheServerClosesWithoutAnswering(client kind: Client) async throws {
        try await withServer({ _ in .closeConnection }) { server, baseURL in
            let error = await caughtError { try await kind.make().get(from: baseURL) }
            guard case .transport? = error as? HTTPClientError else {
                Issue.record("expected a transport error, got \(String(describing: error))")
                return
            }
            #expect(server.requestCount >= 1)
        }
    }

    @Test(arguments: Client.allCases)
    func get_deliversABodyExactlyAtTheLimit(client kind: Client) async throws {
        let body = Data(repeating: 7, count: 1024)
        try await withServer({ _ in HTTPResponse(status: 200, body: body) }) { _, baseURL in
            let (data, _) = try await kind.make(maxBodySize: 1024).get(from: baseURL)
            #expect(data == body)
        }
    }

    @Test(arguments: Client.allCases)
    func get_refusesABodyOverTheLimitAnnouncedByContentLength(client kind: Client) async throws {
        let body = Data(repeating: 7, count: 1025)
        try await withServer({ _ in HTTPResponse(status: 200, body: body) }) { _, baseURL in
            let error = await caughtError { try await kind.make(maxBodySize: 1024).get(from: baseURL) }
            #expect(error as? HTTPClientError == .bodyTooLarge(limit: 1024))
        }
    }

    @Test(arguments: Client.allCases)
    func get_refusesAStreamedBodyOverTheLimitWithoutContentLength(client kind: Client) async throws {
        // 4 MiB with no Content-Length: the client must stop counting at 1 KiB, not buffer it all.
        let body = Data(repeating: 7, count: 4 * 1024 * 1024)
        try await withServer({ _ in HTTPResponse(status: 200, body: body, sendsContentLength: false) }) { _, baseURL in
            let error = await caughtError { try await kind.make(maxBodySize: 1024).get(from: baseURL) }
            #expect(error as? HTTPClientError == .bodyTooLarge(limit: 1024))
        }
    }

    @Test(arguments: Client.allCases)
    func get_deliversAStreamedBodyUnderTheLimitWithoutContentLength(client kind: Client) async throws {
        let body = Data(repeating: 7, count: 100_000)
        try await withServer({ _ in HTTPResponse(status: 200, body: body, sendsContentLength: false) }) { _, baseURL in
            let (data, _) = try await kind.make().get(from: baseURL)
            #expect(data == body)
        }
    }

    @Test(arguments: Client.allCases)
    func get_cancellingTheTaskCancelsTheRequestAndThrowsCancellationError(client kind: Client) async throws {
        // The server would answer after an hour, far past the suite's hang guard: only the
        // cancellation can end the request, however slowly a loaded machine runs the test.
        try await withServer({ _ in HTTPResponse.json("[]").delayed(by: .seconds(3600)) }) { server, baseURL in
            let client = kind.make(timeout: .seconds(3600))
            let task = Task { try await client.get(from: baseURL) }
            #expect(await server.waitForRequests(count: 1))
            task.cancel()
            let error = await caughtError { try await task.value }
            #expect(error is CancellationError)
        }
    }

    @Test(arguments: Client.allCases)
    func get_withATimeout_givesUpOnASlowResponseAtTheDeadline_asATimedOutTransportError(client kind: Client) async throws {
        try await withServer({ _ in HTTPResponse.json("[]").delayed(by: .seconds(120)) }) { _, baseURL in
            // A fraction of a second, which FoundationNetworking would cut to whole seconds
            // (and so time out early) were the deadline handed to it as a request timeout.
            let timeout = Duration.milliseconds(1500)
            let client = kind.make(timeout: timeout)
            let clock = ContinuousClock()
            let started = clock.now
            let poolTurn = PoolTurn(after: timeout)
            let error = await caughtError { try await client.get(from: baseURL) }
            let gaveUp = clock.now
            guard case HTTPClientError.transport(let code, _)? = error as? HTTPClientError else {
                Issue.record("expected a transport error, got \(String(describing: error))")
                return
            }
            #expect(code == .timedOut)
            #expect(gaveUp - started >= timeout)
            // The caller learns of the timeout when the cooperative pool next runs its job: on a
            // busy machine running the whole suite in parallel, many seconds after the deadline
            // (seen: 25 s), for any client. The bound is on what the client adds to that: not
            // the several pool turns of a timer or a cancellation that itself waits for the
            // pool (seen: 27 s more), nor URLSession's own 60 s timeout.
            let turn = try #require(await poolTurn.instant)
            #expect(gaveUp - turn < .seconds(5))
        }
    }

    @Test(arguments: Client.allCases)
    func get_withATimeout_deliversAResponseThatArrivesInTime(client kind: Client) async throws {
        try await withServer({ _ in .json("[1]") }) { _, baseURL in
            let (data, response) = try await kind.make(timeout: .seconds(20)).get(from: baseURL)
            #expect(response.statusCode == 200)
            #expect(data == Data("[1]".utf8))
        }
    }

    @Test(arguments: Client.allCases)
    func get_throwsCancellationErrorWithoutRequestingWhenAlreadyCancelled(client kind: Client) async throws {
        try await withServer({ _ in .json("[]") }) { server, baseURL in
            let client = kind.make()
            let error = await errorFromOwnTask {
                cancelCurrentTask()
                return try await client.get(from: baseURL)
            }
            #expect(error is CancellationError)
            #expect(server.requestCount == 0)
        }
    }

    @Test(arguments: Client.allCases)
    func get_servesConcurrentRequestsWithOneClient(client kind: Client) async throws {
        try await withServer({ request in .json(request.path) }) { _, baseURL in
            let client = kind.make()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        let (data, _) = try await client.get(from: baseURL.appendingPathComponent("r\(index)"))
                        #expect(data == json("/r\(index)"))
                    }
                }
                try await group.waitForAll()
            }
        }
    }
}
