import FeedAPI
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// Conditional requests through every HTTPClient and RemoteLoader, against a real server on
/// 127.0.0.1: the validators go out verbatim, and a 304 comes back to the caller (no HTTP cache
/// in between answers for the server or hides it).
@Suite("Conditional loads end to end", .hangGuard)
struct ConditionalLoadTests {
    static let body = #"{"genres":[{"id":1,"name":"Comedy"}]}"#
    static let lastModified = "Tue, 01 Dec 2026 09:00:00 GMT"

    /// A server whose resource has `etag` and `lastModified`, and that honours both validators.
    static func honouring(etag: String) -> LoopbackHTTPServer.Handler {
        { request in
            let validators = [HTTPHeader("ETag", etag), HTTPHeader("Last-Modified", lastModified)]
            if request.header("If-None-Match") == etag || request.header("If-Modified-Since") == lastModified {
                return HTTPResponse(status: 304, headers: validators)
            }
            return HTTPResponse(status: 200, headers: validators, body: json(body))
        }
    }

    private func notModified(_ result: ConditionalLoad<[Genre]>) -> HTTPValidators? {
        if case .notModified(let validators) = result { validators } else { nil }
    }

    private func modified(_ result: ConditionalLoad<[Genre]>) -> ([Genre], HTTPValidators)? {
        if case .modified(let genres, let validators) = result { (genres, validators) } else { nil }
    }

    private func loader(_ url: URL, _ kind: Client) -> RemoteLoader<[Genre]> {
        RemoteLoader(url: url, client: kind.make(), mapper: GenresMapper.map)
    }

    @Test(arguments: Client.allCases)
    func load_sendsStoredETagAsIfNoneMatch(client kind: Client) async throws {
        try await withServer(Self.honouring(etag: #""v1""#)) { server, baseURL in
            _ = try await loader(baseURL, kind).load(validators: HTTPValidators(etag: #""v1""#))
            #expect(server.requests.map { $0.header("If-None-Match") } == [#""v1""#])
            #expect(server.requests.map { $0.header("If-Modified-Since") } == [nil])
        }
    }

    @Test(arguments: Client.allCases)
    func load_sendsStoredLastModifiedAsIfModifiedSince(client kind: Client) async throws {
        try await withServer(Self.honouring(etag: #""v1""#)) { server, baseURL in
            _ = try await loader(baseURL, kind).load(validators: HTTPValidators(lastModified: Self.lastModified))
            #expect(server.requests.map { $0.header("If-Modified-Since") } == [Self.lastModified])
            #expect(server.requests.map { $0.header("If-None-Match") } == [nil])
        }
    }

    @Test(arguments: Client.allCases)
    func load_sendsAWeakETagVerbatim(client kind: Client) async throws {
        try await withServer(Self.honouring(etag: #"W/"v1""#)) { server, baseURL in
            let result = try await loader(baseURL, kind).load(validators: HTTPValidators(etag: #"W/"v1""#))
            #expect(server.requests.map { $0.header("If-None-Match") } == [#"W/"v1""#])
            let validators = try #require(notModified(result))
            #expect(validators.etag == #"W/"v1""#)
        }
    }

    @Test(arguments: Client.allCases)
    func load_withoutValidators_sendsNoConditionalHeaders_andDeliversTheValidatorsOfThe200(client kind: Client) async throws {
        try await withServer(Self.honouring(etag: #""v1""#)) { server, baseURL in
            let result = try await loader(baseURL, kind).load(validators: HTTPValidators())
            #expect(server.requests.map { $0.header("If-None-Match") } == [nil])
            #expect(server.requests.map { $0.header("If-Modified-Since") } == [nil])
            let (genres, validators) = try #require(modified(result))
            #expect(genres.map(\.name) == ["Comedy"])
            #expect(validators == HTTPValidators(etag: #""v1""#, lastModified: Self.lastModified))
        }
    }

    @Test(arguments: Client.allCases)
    func load_deliversNotModifiedOn304(client kind: Client) async throws {
        try await withServer(Self.honouring(etag: #""v1""#)) { _, baseURL in
            let result = try await loader(baseURL, kind).load(validators: HTTPValidators(etag: #""v1""#, lastModified: Self.lastModified))
            let validators = try #require(notModified(result))
            #expect(validators == HTTPValidators(etag: #""v1""#, lastModified: Self.lastModified))
        }
    }

    @Test(arguments: Client.allCases)
    func load_on304_keepsTheSentValidatorsTheResponseLeavesOut(client kind: Client) async throws {
        try await withServer({ _ in HTTPResponse(status: 304, headers: [HTTPHeader("ETag", #""v2""#)]) }) { _, baseURL in
            let result = try await loader(baseURL, kind).load(validators: HTTPValidators(etag: #""v1""#, lastModified: Self.lastModified))
            let validators = try #require(notModified(result))
            #expect(validators == HTTPValidators(etag: #""v2""#, lastModified: Self.lastModified))
        }
    }

    @Test(arguments: Client.allCases)
    func load_deliversTheBodyAndItsNewETagWhenTheResourceChanged(client kind: Client) async throws {
        try await withServer(Self.honouring(etag: #""v2""#)) { _, baseURL in
            let result = try await loader(baseURL, kind).load(validators: HTTPValidators(etag: #""v1""#))
            let (genres, validators) = try #require(modified(result))
            #expect(genres.map(\.name) == ["Comedy"])
            #expect(validators.etag == #""v2""#)
        }
    }

    @Test(arguments: Client.allCases)
    func load_fromAServerThatIgnoresValidators_deliversTheBodyAsBefore(client kind: Client) async throws {
        try await withServer({ _ in .json(Self.body) }) { _, baseURL in
            let result = try await loader(baseURL, kind).load(validators: HTTPValidators(etag: #""v1""#))
            let (genres, validators) = try #require(modified(result))
            #expect(genres.map(\.name) == ["Comedy"])
            #expect(validators.isEmpty)
        }
    }

    @Test(arguments: Client.allCases)
    func load_withoutValidators_deliversInvalidDataOnA304(client kind: Client) async throws {
        try await withServer({ _ in HTTPResponse(status: 304) }) { _, baseURL in
            await #expect(throws: RemoteLoaderError.invalidData) { try await loader(baseURL, kind).load() }
            await #expect(throws: RemoteLoaderError.invalidData) { try await loader(baseURL, kind).load(validators: HTTPValidators()) }
        }
    }
}
