import FeedAPI
import Foundation
import TestSupport
import Testing

/// RemoteLoader against a stubbed client: the mapping rules, independent of any network.
@Suite("RemoteLoader")
struct RemoteLoaderTests {
    private func makeLoader(_ client: HTTPClientStub) -> RemoteLoader<[Genre]> {
        RemoteLoader(url: anyURL, client: client, mapper: GenresMapper.map)
    }

    @Test
    func load_requestsDataFromTheURL() async throws {
        let requested = RequestedURLs()
        let client = HTTPClientStub { url in
            requested.append(url)
            return (json(#"{"genres":[]}"#), response(200, url: url))
        }
        _ = try await makeLoader(client).load()
        #expect(requested.urls == [anyURL])
    }

    @Test
    func load_deliversConnectivityErrorOnClientError() async {
        let loader = makeLoader(.failure(HTTPClientError.transport(code: .cannotConnectToHost, message: "refused")))
        await #expect(throws: RemoteLoaderError.connectivity) { try await loader.load() }
    }

    @Test
    func load_deliversConnectivityErrorOnUnsupportedURL() async {
        let loader = makeLoader(.failure(HTTPClientError.unsupportedURL(anyURL)))
        await #expect(throws: RemoteLoaderError.connectivity) { try await loader.load() }
    }

    @Test
    func load_deliversInvalidDataErrorWhenTheBodyIsOverTheClientLimit() async {
        let loader = makeLoader(.failure(HTTPClientError.bodyTooLarge(limit: 10)))
        await #expect(throws: RemoteLoaderError.invalidData) { try await loader.load() }
    }

    @Test(arguments: nonOKStatuses)
    func load_deliversInvalidDataErrorOnNon200HTTPResponse(status: Int) async {
        let loader = makeLoader(.success(json(#"{"genres":[]}"#), status: status))
        await #expect(throws: RemoteLoaderError.invalidData) { try await loader.load() }
    }

    @Test
    func load_deliversInvalidDataErrorOnNon200EvenWhenTheMapperWouldAcceptIt() async {
        let loader = RemoteLoader(url: anyURL, client: HTTPClientStub.success(Data(), status: 201)) { _, _ in "accepted" }
        await #expect(throws: RemoteLoaderError.invalidData) { try await loader.load() }
    }

    @Test
    func load_deliversInvalidDataErrorOn200HTTPResponseWithInvalidJSON() async {
        let loader = makeLoader(.success(json("invalid json"), status: 200))
        await #expect(throws: RemoteLoaderError.invalidData) { try await loader.load() }
    }

    @Test
    func load_deliversInvalidDataErrorWhateverTheMapperThrows() async {
        struct MapperError: Error {}
        let loader = RemoteLoader<Int>(url: anyURL, client: HTTPClientStub.success(Data(), status: 200)) { _, _ in
            throw MapperError()
        }
        await #expect(throws: RemoteLoaderError.invalidData) { try await loader.load() }
    }

    @Test
    func load_deliversItemsOn200HTTPResponseWithValidJSON() async throws {
        let loader = makeLoader(.success(json(#"{"genres":[{"id":1,"name":"Arts"}]}"#), status: 200))
        #expect(try await loader.load() == [Genre(id: 1, name: "Arts")])
    }

    @Test
    func load_deliversCancellationErrorWhenTheClientThrowsIt() async {
        let loader = makeLoader(.failure(CancellationError()))
        await #expect(throws: CancellationError.self) { try await loader.load() }
    }

    @Test
    func load_deliversCancellationErrorNotItemsWhenCancelledWhileLoading() async {
        let client = HTTPClientStub { url in
            // The client ignores cancellation and answers anyway: the loader must drop the answer.
            cancelCurrentTask()
            return (json(#"{"genres":[]}"#), response(200, url: url))
        }
        let loader = makeLoader(client)
        let error = await errorFromOwnTask { try await loader.load() }
        #expect(error is CancellationError)
    }

    @Test
    func load_deliversCancellationErrorNotALoaderErrorWhenCancelledWhileFailing() async {
        let client = HTTPClientStub { _ in
            cancelCurrentTask()
            throw HTTPClientError.transport(code: .cancelled, message: "cancelled")
        }
        let loader = makeLoader(client)
        let error = await errorFromOwnTask { try await loader.load() }
        #expect(error is CancellationError)
    }

    @Test
    func load_logsAFailureAtInfoAndNothingAboveDebugOnSuccess() async throws {
        // A failed request is a detail: a retry or the cache may still answer, and the caller gets the error.
        let (logger, store) = capturingLogger()
        let failing = RemoteLoader(url: anyURL, client: HTTPClientStub.success(json("{}"), status: 200),
                                   mapper: GenresMapper.map, logger: logger)
        _ = await caughtError { try await failing.load() }
        #expect(store.messages.filter { $0.level >= .info }.map(\.level) == [.info], "\(store.messages)")

        let (quietLogger, quietStore) = capturingLogger()
        let succeeding = RemoteLoader(url: anyURL, client: HTTPClientStub.success(json(#"{"genres":[]}"#), status: 200),
                                      mapper: GenresMapper.map, logger: quietLogger)
        _ = try await succeeding.load()
        #expect(!quietStore.messages.isEmpty)
        #expect(quietStore.messages.allSatisfy { $0.level <= .debug })
    }

    @Test
    func load_throughAClientThatCannotSendHeaders_makesThePlainRequest() async throws {
        let client = HTTPClientStub.success(json(#"{"genres":[{"id":1,"name":"Comedy"}]}"#), status: 200)
        let result = try await RemoteLoader(url: anyURL, client: client, mapper: GenresMapper.map).load(validators: HTTPValidators(etag: #""v1""#))
        guard case .modified(let genres, _) = result else {
            Issue.record("expected the genres, got \(result)")
            return
        }
        #expect(genres.map(\.name) == ["Comedy"])
    }
}

@Suite("RemoteImageDataLoader")
struct RemoteImageDataLoaderTests {
    @Test
    func loadImageData_requestsTheGivenURL() async throws {
        let requested = RequestedURLs()
        let client = HTTPClientStub { url in
            requested.append(url)
            return (Data("image".utf8), response(200, url: url))
        }
        let url = try #require(URL(string: "http://images.test/1.png"))
        _ = try await RemoteImageDataLoader(client: client).loadImageData(from: url)
        #expect(requested.urls == [url])
    }

    @Test
    func loadImageData_deliversConnectivityErrorOnClientError() async {
        let loader = RemoteImageDataLoader(client: HTTPClientStub.failure(HTTPClientError.transport(code: .timedOut, message: "")))
        await #expect(throws: RemoteLoaderError.connectivity) { try await loader.loadImageData(from: anyURL) }
    }

    @Test(arguments: nonOKStatuses)
    func loadImageData_deliversInvalidDataErrorOnNon200HTTPResponse(status: Int) async {
        let loader = RemoteImageDataLoader(client: HTTPClientStub.success(Data("image".utf8), status: status))
        await #expect(throws: RemoteLoaderError.invalidData) { try await loader.loadImageData(from: anyURL) }
    }

    @Test
    func loadImageData_deliversInvalidDataErrorOn200HTTPResponseWithEmptyData() async {
        let loader = RemoteImageDataLoader(client: HTTPClientStub.success(Data(), status: 200))
        await #expect(throws: RemoteLoaderError.invalidData) { try await loader.loadImageData(from: anyURL) }
    }

    @Test
    func loadImageData_deliversDataOn200HTTPResponseWithNonEmptyData() async throws {
        let data = Data("image".utf8)
        let loader = RemoteImageDataLoader(client: HTTPClientStub.success(data, status: 200))
        #expect(try await loader.loadImageData(from: anyURL) == data)
    }

    @Test
    func loadImageData_deliversNeitherDataNorErrorAfterCancellation() async {
        let client = HTTPClientStub { url in
            cancelCurrentTask()
            return (Data("image".utf8), response(200, url: url))
        }
        let error = await errorFromOwnTask { try await RemoteImageDataLoader(client: client).loadImageData(from: anyURL) }
        #expect(error is CancellationError)
    }
}

/// Records the URLs a stub was asked for.
final class RequestedURLs: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [URL] = []

    func append(_ url: URL) {
        lock.lock(); defer { lock.unlock() }
        stored.append(url)
    }

    var urls: [URL] {
        lock.lock(); defer { lock.unlock() }
        return stored
    }
}
