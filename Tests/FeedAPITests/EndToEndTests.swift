import FeedAPI
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// RemoteLoader against a real HTTP server on 127.0.0.1.
@Suite("RemoteLoader end to end", .hangGuard)
struct RemoteLoaderEndToEndTests {
    private let filmsJSON = """
    [{"id":"2baf70d1-42bb-4437-b551-e5fed5a87abe","title":"Castle in the Sky","description":"Sheeta",
      "image":"https://image.test/castle.jpg","url":"https://ghibli.test/films/2baf70d1"}]
    """

    private func filmsLoader(_ url: URL, maxBodySize: Int = CurlHTTPClient.defaultMaxBodySize) -> RemoteLoader<[Film]> {
        RemoteLoader(url: url, client: CurlHTTPClient(userAgent: "cachelog-tests/1", maxBodySize: maxBodySize), mapper: FilmsMapper.map)
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
        let port = try DeadPort()
        await #expect(throws: RemoteLoaderError.connectivity) { try await filmsLoader(port.url()).load() }
    }

    /// The sentence names what the transport could not reach and why (the host and the port),
    /// not only "unreachable"; the time the failure took, which differs from try to try, is left out.
    @Test
    func load_whenNothingListens_saysWhichHostAndPortItCouldNotConnectTo() async throws {
        let port = try DeadPort()
        let url = port.url()
        let error = await #expect(throws: RemoteLoaderError.self) { try await filmsLoader(url).load() }
        let expected = "remote unreachable: Failed to connect to 127.0.0.1 port \(url.port ?? 0): Couldn't connect to server"
        #expect(error?.description == expected)
        #expect(error?.localizedDescription.contains("port \(url.port ?? 0)") == true, "\(String(describing: error?.localizedDescription))")
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
        try await withServer({ [filmsJSON] _ in HTTPResponse.json(filmsJSON).delayed(by: .seconds(600)) }) { server, baseURL in
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
        try await withServer({ _ in HTTPResponse(status: 200, body: Data("png".utf8), delay: .seconds(600)) }) { server, baseURL in
            let loader = RemoteImageDataLoader(client: CurlHTTPClient(userAgent: "cachelog-tests/1"))
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
            let data = try await RemoteImageDataLoader(client: CurlHTTPClient(userAgent: "cachelog-tests/1")).loadImageData(from: baseURL)
            #expect(data == png)
        }
    }
}
