import FeedAPI
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// URLSessionHTTPClient and RemoteLoader against a real HTTP server on 127.0.0.1.
@Suite("URLSessionHTTPClient end to end", .timeLimit(.minutes(1)))
struct URLSessionHTTPClientEndToEndTests {
    @Test
    func get_deliversBodyAndResponseForAnyStatus() async throws {
        try await withServer({ _ in HTTPResponse(status: 418, headers: [HTTPHeader("X-Test", "yes")], body: json("teapot")) }) { server, baseURL in
            let (data, response) = try await URLSessionHTTPClient().get(from: baseURL.appendingPathComponent("tea"))
            #expect(response.statusCode == 418)
            #expect(response.value(forHTTPHeaderField: "X-Test") == "yes")
            #expect(data == json("teapot"))
            #expect(server.requests.map(\.method) == ["GET"])
            #expect(server.requests.map(\.path) == ["/tea"])
        }
    }

    @Test
    func get_refusesANonHTTPURLWithoutRequestingIt() async throws {
        let url = URL(fileURLWithPath: "/etc/hostname")
        let error = await caughtError { try await URLSessionHTTPClient().get(from: url) }
        #expect(error as? HTTPClientError == .unsupportedURL(url))
    }

    @Test
    func get_deliversTransportErrorWhenNothingListens() async throws {
        let url = try deadURL()
        let error = await caughtError { try await URLSessionHTTPClient().get(from: url) }
        guard case .transport? = error as? HTTPClientError else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
    }

    @Test
    func get_deliversTransportErrorWhenTheServerClosesWithoutAnswering() async throws {
        try await withServer({ _ in .closeConnection }) { server, baseURL in
            let error = await caughtError { try await URLSessionHTTPClient().get(from: baseURL) }
            guard case .transport? = error as? HTTPClientError else {
                Issue.record("expected a transport error, got \(String(describing: error))")
                return
            }
            #expect(server.requestCount >= 1)
        }
    }

    @Test
    func get_deliversABodyExactlyAtTheLimit() async throws {
        let body = Data(repeating: 7, count: 1024)
        try await withServer({ _ in HTTPResponse(status: 200, body: body) }) { _, baseURL in
            let (data, _) = try await URLSessionHTTPClient(maxBodySize: 1024).get(from: baseURL)
            #expect(data == body)
        }
    }

    @Test
    func get_refusesABodyOverTheLimitAnnouncedByContentLength() async throws {
        let body = Data(repeating: 7, count: 1025)
        try await withServer({ _ in HTTPResponse(status: 200, body: body) }) { _, baseURL in
            let error = await caughtError { try await URLSessionHTTPClient(maxBodySize: 1024).get(from: baseURL) }
            #expect(error as? HTTPClientError == .bodyTooLarge(limit: 1024))
        }
    }

    @Test
    func get_refusesAStreamedBodyOverTheLimitWithoutContentLength() async throws {
        // 4 MiB with no Content-Length: the client must stop counting at 1 KiB, not buffer it all.
        let body = Data(repeating: 7, count: 4 * 1024 * 1024)
        try await withServer({ _ in HTTPResponse(status: 200, body: body, sendsContentLength: false) }) { _, baseURL in
            let error = await caughtError { try await URLSessionHTTPClient(maxBodySize: 1024).get(from: baseURL) }
            #expect(error as? HTTPClientError == .bodyTooLarge(limit: 1024))
        }
    }

    @Test
    func get_deliversAStreamedBodyUnderTheLimitWithoutContentLength() async throws {
        let body = Data(repeating: 7, count: 100_000)
        try await withServer({ _ in HTTPResponse(status: 200, body: body, sendsContentLength: false) }) { _, baseURL in
            let (data, _) = try await URLSessionHTTPClient().get(from: baseURL)
            #expect(data == body)
        }
    }

    @Test
    func get_cancellingTheTaskCancelsTheRequestAndThrowsCancellationError() async throws {
        try await withServer({ _ in HTTPResponse.json("[]").delayed(by: .seconds(30)) }) { server, baseURL in
            let client = URLSessionHTTPClient()
            let task = Task { try await client.get(from: baseURL) }
            #expect(await server.waitForRequests(count: 1))
            let clock = ContinuousClock()
            let cancelledAt = clock.now
            task.cancel()
            let error = await caughtError { try await task.value }
            #expect(error is CancellationError)
            #expect(clock.now - cancelledAt < .seconds(30))
        }
    }

    @Test
    func get_withATimeout_givesUpOnASlowResponseAtTheDeadline_asATimedOutTransportError() async throws {
        try await withServer({ _ in HTTPResponse.json("[]").delayed(by: .seconds(120)) }) { _, baseURL in
            let client = URLSessionHTTPClient(timeout: .seconds(1))
            let clock = ContinuousClock()
            let started = clock.now
            let error = await caughtError { try await client.get(from: baseURL) }
            guard case HTTPClientError.transport(let code, _)? = error as? HTTPClientError else {
                Issue.record("expected a transport error, got \(String(describing: error))")
                return
            }
            #expect(code == .timedOut)
            // Far below the server's delay; generous, since a busy machine may run the timer late.
            #expect(clock.now - started < .seconds(60))
        }
    }

    @Test
    func get_withATimeout_deliversAResponseThatArrivesInTime() async throws {
        try await withServer({ _ in .json("[1]") }) { _, baseURL in
            let (data, response) = try await URLSessionHTTPClient(timeout: .seconds(20)).get(from: baseURL)
            #expect(response.statusCode == 200)
            #expect(data == Data("[1]".utf8))
        }
    }

    @Test
    func get_throwsCancellationErrorWithoutRequestingWhenAlreadyCancelled() async throws {
        try await withServer({ _ in .json("[]") }) { server, baseURL in
            let client = URLSessionHTTPClient()
            let error = await errorFromOwnTask {
                cancelCurrentTask()
                return try await client.get(from: baseURL)
            }
            #expect(error is CancellationError)
            #expect(server.requestCount == 0)
        }
    }

    @Test
    func get_servesConcurrentRequestsWithOneClient() async throws {
        try await withServer({ request in .json(request.path) }) { _, baseURL in
            let client = URLSessionHTTPClient()
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

@Suite("RemoteLoader end to end", .timeLimit(.minutes(1)))
struct RemoteLoaderEndToEndTests {
    private let filmsJSON = """
    [{"id":"2baf70d1-42bb-4437-b551-e5fed5a87abe","title":"Castle in the Sky","description":"Sheeta",
      "image":"https://image.test/castle.jpg","url":"https://ghibli.test/films/2baf70d1"}]
    """

    private func filmsLoader(_ url: URL, maxBodySize: Int = URLSessionHTTPClient.defaultMaxBodySize) -> RemoteLoader<[Film]> {
        RemoteLoader(url: url, client: URLSessionHTTPClient(maxBodySize: maxBodySize), mapper: FilmsMapper.map)
    }

    @Test
    func load_deliversFilmsOn200HTTPResponseWithValidJSON() async throws {
        try await withServer(LoopbackHTTPServer.routes(["/films": .json(filmsJSON)])) { _, baseURL in
            let films = try await filmsLoader(baseURL.appendingPathComponent("films")).load()
            #expect(films.map(\.title) == ["Castle in the Sky"])
        }
    }

    @Test(arguments: [199, 201, 300, 400, 500])
    func load_deliversAnErrorOnNon200HTTPResponse(status: Int) async throws {
        try await withServer({ [filmsJSON] _ in .json(filmsJSON, status: status) }) { _, baseURL in
            let error = await caughtError { try await filmsLoader(baseURL).load() }
            // A lone 1xx is not a final HTTP response, so the transport rejects it itself.
            let expected: RemoteLoaderError = status < 200 ? .connectivity : .invalidData
            #expect(error as? RemoteLoaderError == expected)
        }
    }

    @Test(arguments: ["not json", #"{"films":[]}"#, ""])
    func load_deliversInvalidDataErrorOn200HTTPResponseWithInvalidBody(body: String) async throws {
        try await withServer({ _ in .json(body) }) { _, baseURL in
            await #expect(throws: RemoteLoaderError.invalidData) { try await filmsLoader(baseURL).load() }
        }
    }

    @Test
    func load_deliversConnectivityErrorWhenNothingListens() async throws {
        let url = try deadURL()
        await #expect(throws: RemoteLoaderError.connectivity) { try await filmsLoader(url).load() }
    }

    @Test
    func load_deliversConnectivityErrorOnANonHTTPURL() async throws {
        let url = URL(fileURLWithPath: "/tmp/films.json")
        await #expect(throws: RemoteLoaderError.connectivity) { try await filmsLoader(url).load() }
    }

    @Test
    func load_deliversInvalidDataErrorWhenTheBodyIsOverTheLimit() async throws {
        try await withServer({ [filmsJSON] _ in .json(filmsJSON) }) { _, baseURL in
            await #expect(throws: RemoteLoaderError.invalidData) { try await filmsLoader(baseURL, maxBodySize: 16).load() }
        }
    }

    @Test
    func load_followsTheServerFromOnlineToFailingAtRuntime() async throws {
        try await withServer({ [filmsJSON] _ in .json(filmsJSON) }) { server, baseURL in
            let loader = filmsLoader(baseURL)
            let films = try await loader.load()
            #expect(films.count == 1)

            server.setHandler { _ in .status(500) }
            await #expect(throws: RemoteLoaderError.invalidData) { try await loader.load() }

            server.setHandler { _ in .json("{") }
            await #expect(throws: RemoteLoaderError.invalidData) { try await loader.load() }

            server.setHandler { _ in .closeConnection }
            await #expect(throws: RemoteLoaderError.connectivity) { try await loader.load() }
        }
    }

    @Test
    func load_deliversCancellationErrorWhenCancelledWhileTheServerDelays() async throws {
        try await withServer({ [filmsJSON] _ in HTTPResponse.json(filmsJSON).delayed(by: .seconds(30)) }) { server, baseURL in
            let loader = filmsLoader(baseURL)
            let task = Task { try await loader.load() }
            #expect(await server.waitForRequests(count: 1))
            task.cancel()
            let error = await caughtError { try await task.value }
            #expect(error is CancellationError)
        }
    }

    @Test
    func loadImageData_deliversNeitherDataNorErrorWhenCancelledWhileTheServerDelays() async throws {
        try await withServer({ _ in HTTPResponse(status: 200, body: Data("png".utf8), delay: .seconds(30)) }) { server, baseURL in
            let loader = RemoteImageDataLoader(client: URLSessionHTTPClient())
            let task = Task { try await loader.loadImageData(from: baseURL.appendingPathComponent("image.png")) }
            #expect(await server.waitForRequests(count: 1))
            task.cancel()
            let error = await caughtError { try await task.value }
            #expect(error is CancellationError)
        }
    }

    @Test
    func loadImageData_deliversDataFromTheServer() async throws {
        let png = Data([0x89, 0x50, 0x4E, 0x47])
        try await withServer({ _ in HTTPResponse(status: 200, body: png) }) { _, baseURL in
            let data = try await RemoteImageDataLoader(client: URLSessionHTTPClient()).loadImageData(from: baseURL)
            #expect(data == png)
        }
    }
}
