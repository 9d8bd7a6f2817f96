import FeedAPI
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// What only CurlHTTPClient promises: TLS failures that say what failed, a CA file of one's own,
/// the User-Agent, a transfer that stops when cancelled, and a clear error without libcurl.
@Suite("CurlHTTPClient", .timeLimit(.minutes(3)))
struct CurlHTTPClientTests {
    static let body = #"{"genres":[{"id":1,"name":"Comedy"}]}"#

    private func client(caFile: String? = nil) -> CurlHTTPClient {
        CurlHTTPClient(userAgent: "cachelog-tests/1", timeout: .seconds(20), caFile: caFile)
    }

    @Test
    func https_withTheServersCertificateAsCAFile_deliversTheBody() async throws {
        let server = try await TLSTestServer(body: Self.body)
        let (data, response) = try await client(caFile: server.certificateFile).get(from: server.url("/genres"))
        #expect(response.statusCode == 200)
        #expect(response.url == server.url("/genres"))
        #expect(data == json(Self.body))
        await server.stop()
    }

    @Test
    func https_withACertificateTheSystemDoesNotTrust_failsAsCertificateNotTrusted() async throws {
        let server = try await TLSTestServer(body: Self.body)
        let error = await caughtError { try await client().get(from: server.url()) }
        guard case .transport(let code, _)? = error as? HTTPClientError else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
        #expect(code == .serverCertificateUntrusted)
        #expect("\(error.map { "\($0)" } ?? "")".hasPrefix("certificate not trusted: "))
        #expect(server.events.isEmpty, "no request reaches a server that is not trusted")
        await server.stop()
    }

    @Test
    func https_toANameTheCertificateIsNotFor_failsAsCertificateNotTrusted() async throws {
        let server = try await TLSTestServer(body: Self.body)
        // The certificate names 127.0.0.1; localhost reaches the same server under another name.
        let error = await caughtError { try await client(caFile: server.certificateFile).get(from: server.url(host: "localhost")) }
        let description = error.map { "\($0)" } ?? "no error"
        #expect(description.hasPrefix("certificate not trusted: "), "\(description)")
        #expect(description.contains("localhost"), "\(description)")
        await server.stop()
    }

    @Test
    func https_toAPlainHTTPServer_failsAsTLSHandshakeFailed() async throws {
        let server = try await TLSTestServer(body: Self.body)
        let url = try #require(URL(string: "https://127.0.0.1:\(server.plainPort)/feed"))
        let error = await caughtError { try await client().get(from: url) }
        guard case .transport(let code, _)? = error as? HTTPClientError else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
        #expect(code == .secureConnectionFailed)
        let description = error.map { "\($0)" } ?? ""
        #expect(description.hasPrefix("TLS handshake failed: "), "\(description)")
        await server.stop()
    }

    @Test
    func load_ofAnUntrustedServer_isAConnectivityErrorThatSaysCertificateNotTrusted() async throws {
        let server = try await TLSTestServer(body: Self.body)
        let error = await caughtError { try await RemoteLoader(url: server.url(), client: client(), mapper: GenresMapper.map).load() }
        let loaderError = try #require(error as? RemoteLoaderError)
        #expect(loaderError == .connectivity)
        #expect(loaderError.description.hasPrefix("remote certificate not trusted: "), "\(loaderError)")
        await server.stop()
    }

    @Test
    func get_cancelledMidTransfer_stopsTheTransfer() async throws {
        let server = try await TLSTestServer(body: Self.body)
        let client = client(caFile: server.certificateFile)
        let task = Task { try await client.get(from: server.url("/trickle")) }
        // Some bytes are under way before the cancellation.
        #expect(try await eventually(timeout: .seconds(60)) { server.events.contains("sent 10 bytes") }, "\(server.events)")
        task.cancel()
        let error = await caughtError { try await task.value }
        #expect(error is CancellationError)
        // The server sees the connection go well before its 1000 s of trickling end.
        #expect(try await eventually(timeout: .seconds(10)) { server.events.contains("client closed") }, "\(server.events)")
        await server.stop()
    }

    @Test
    func get_sendsItsUserAgent() async throws {
        try await withServer({ _ in .json(Self.body) }) { server, baseURL in
            _ = try await CurlHTTPClient(userAgent: "cachelog/9.9.9").get(from: baseURL)
            #expect(server.requests.map { $0.header("User-Agent") } == ["cachelog/9.9.9"])
        }
    }

    @Test
    func get_withoutLibcurl_throwsUnavailable_namingThePackageToInstall() async throws {
        try await withServer({ _ in .json(Self.body) }) { server, baseURL in
            let client = CurlHTTPClient(userAgent: "cachelog-tests/1", libraryNames: ["libcurl-that-is-not-installed.so.4"])
            let error = await caughtError { try await client.get(from: baseURL) }
            guard case .unavailable(let message)? = error as? HTTPClientError else {
                Issue.record("expected unavailable, got \(String(describing: error))")
                return
            }
            #expect(message.contains("libcurl-that-is-not-installed.so.4"), "\(message)")
            #expect(message.contains("install the libcurl4 package"), "\(message)")
            #expect(server.requestCount == 0)

            let loaderError = await caughtError { try await RemoteLoader(url: baseURL, client: client, mapper: GenresMapper.map).load() }
            #expect("\(loaderError.map { "\($0)" } ?? "")".hasPrefix("remote not asked: libcurl could not be loaded"))
        }
    }
}
