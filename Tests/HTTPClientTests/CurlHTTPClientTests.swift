import FeedAPI
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// What only CurlHTTPClient promises: TLS failures that say what failed, a CA file of one's own,
/// the User-Agent, a transfer that stops when cancelled, a clear error without libcurl, redirects
/// that never leave https for http, proxies named when they fail, bodies decoded only when whole,
/// and header bytes kept exactly.
@Suite("CurlHTTPClient", .hangGuard)
struct CurlHTTPClientTests {
    static let body = #"{"genres":[{"id":1,"name":"Comedy"}]}"#

    private func client(caFile: String? = nil, timeout: Duration = .seconds(20)) -> CurlHTTPClient {
        CurlHTTPClient(userAgent: "cachelog-tests/1", timeout: timeout, caFile: caFile)
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
        // A timeout far past the hang guard: only the cancellation can end the transfer.
        let client = client(caFile: server.certificateFile, timeout: .seconds(3600))
        let task = Task { try await client.get(from: server.url("/trickle")) }
        // Some bytes are under way before the cancellation.
        #expect(try await eventually(timeout: .seconds(300)) { server.events.contains("sent 10 bytes") }, "\(server.events)")
        task.cancel()
        let error = await caughtError { try await task.value }
        #expect(error is CancellationError)
        // The server sees the connection go well before its 1000 s of trickling end.
        #expect(try await eventually(timeout: .seconds(300)) { server.events.contains("client closed") }, "\(server.events)")
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

    @Test
    func https_withCACertificatesRead_deliversTheBody() async throws {
        let server = try await TLSTestServer(body: Self.body)
        let certificates = try PEMCertificates(contentsOfFile: server.certificateFile)
        let client = CurlHTTPClient(userAgent: "cachelog-tests/1", timeout: .seconds(20), caCertificates: certificates)
        let (data, response) = try await client.get(from: server.url("/genres"))
        #expect(response.statusCode == 200)
        #expect(data == json(Self.body))
        await server.stop()
    }

    @Test
    func aRedirectFromHTTPSToHTTP_throwsRedirectRefused_withoutAskingTheHTTPServer() async throws {
        let server = try await TLSTestServer(body: Self.body)
        try await withServer({ _ in .json(Self.body) }) { plain, baseURL in
            let target = baseURL.absoluteString + "/genres"
            let redirect = server.redirect(to: target)
            let error = await caughtError { try await client(caFile: server.certificateFile).get(from: redirect) }
            #expect(error as? HTTPClientError == .redirectRefused(from: redirect, to: target))
            #expect("\(error.map { "\($0)" } ?? "")" == "redirect to \(target) refused: it leaves https for plain http")
            #expect(plain.requestCount == 0)

            let loaderError = await caughtError {
                try await RemoteLoader(url: redirect, client: client(caFile: server.certificateFile), mapper: GenresMapper.map).load()
            }
            let remote = try #require(loaderError as? RemoteLoaderError)
            #expect(remote == .connectivity)
            #expect(remote.description == "remote redirect to \(target) refused: it leaves https for plain http")
        }
        await server.stop()
    }

    @Test
    func aNotModifiedWithALocation_isDeliveredAsItCame() async throws {
        try await withServer({ _ in HTTPResponse(status: 304, headers: [HTTPHeader("Location", "/elsewhere")]) }) { server, baseURL in
            let (_, response) = try await client().get(from: baseURL)
            #expect(response.statusCode == 304)
            #expect(server.requests.map(\.path) == ["/"])
        }
    }

    @Test
    func aProxyThatCannotBeReached_throwsProxyFailed_namingIt() async throws {
        let dead = try DeadPort.shared().port
        try await withServer({ _ in .json(Self.body) }) { server, baseURL in
            let client = CurlHTTPClient(userAgent: "cachelog-tests/1", proxy: .init(server: .url("http://who:pw@127.0.0.1:\(dead)")))
            let error = await caughtError { try await client.get(from: baseURL) }
            guard case .proxyFailed(let proxy, let code, _)? = error as? HTTPClientError else {
                Issue.record("expected proxyFailed, got \(String(describing: error))")
                return
            }
            #expect(proxy == "http://127.0.0.1:\(dead)")
            #expect(code == .cannotConnectToHost)
            #expect(server.requestCount == 0)
        }
    }

    @Test
    func headerBytes_goBothWaysExactly() async throws {
        let etag = "\"\u{FF}\u{FE}\u{80}\""
        try await withServer({ _ in HTTPResponse(status: 200, headers: [HTTPHeader("ETag", etag)], body: json(Self.body)) }) { server, baseURL in
            let (_, response) = try await client().get(from: baseURL, headers: ["If-None-Match": etag])
            #expect(response.value(forHTTPHeaderField: "ETag") == etag)
            #expect(server.requests.first?.header("If-None-Match") == etag)
            #expect(HTTPValidators(response: response).requestHeaders["If-None-Match"] == etag)
        }
    }

    /// Bodies as servers encode them: each decodes to the same JSON.
    static let encodings: [(coding: String, body: Data)] = [
        ("gzip", Compressed.gzip(json(body))),
        ("x-gzip", Compressed.gzip(json(body))),
        ("deflate", Compressed.deflate(json(body))),
        ("deflate", Compressed.rawDeflate(json(body))),
        // Two gzip members, as RFC 1952 allows.
        ("gzip", Compressed.gzip(json(String(body.prefix(10)))) + Compressed.gzip(json(String(body.dropFirst(10))))),
        ("identity", json(body)),
    ]

    @Test(arguments: 0..<encodings.count)
    func anEncodedBody_isDecoded(_ index: Int) async throws {
        let (coding, encoded) = Self.encodings[index]
        try await withServer({ _ in HTTPResponse(status: 200, headers: [HTTPHeader("Content-Encoding", coding)], body: encoded) }) { _, baseURL in
            let (data, _) = try await client().get(from: baseURL)
            #expect(data == json(Self.body), "\(coding)")
        }
    }

    @Test
    func aBodyThatDoesNotDecode_throwsCannotDecodeContentData() async throws {
        let gzip = Compressed.gzip(json(Self.body))
        let broken: [(coding: String, body: Data, message: String)] = [
            ("gzip", Data(gzip.dropLast(8)), "the gzip body is truncated: it ends before its gzip stream does"),
            ("gzip", Data(gzip.dropLast(20)), "the gzip body is truncated: it ends before its gzip stream does"),
            ("gzip", gzip + Data("junk".utf8), "the gzip body is corrupt: incorrect header check"),
            ("gzip", json(Self.body), "the gzip body is corrupt: incorrect header check"),
            ("deflate", Compressed.deflate(json(Self.body)) + Data([0]), "the deflate body is corrupt: data follows the end of the stream"),
            ("br", json(Self.body), "the body's content encoding 'br' is not one this client decodes (gzip, deflate)"),
        ]
        for (coding, body, message) in broken {
            try await withServer({ _ in HTTPResponse(status: 200, headers: [HTTPHeader("Content-Encoding", coding)], body: body) }) { _, baseURL in
                let error = await caughtError { try await client().get(from: baseURL) }
                #expect(error as? HTTPClientError == .transport(code: .cannotDecodeContentData, message: message), "\(coding)")
            }
        }
    }

    @Test
    func anEncodedBody_isLimitedByItsDecodedSize() async throws {
        let decoded = Data(repeating: 0x20, count: 100_000)
        try await withServer({ _ in HTTPResponse(status: 200, headers: [HTTPHeader("Content-Encoding", "gzip")], body: Compressed.gzip(decoded)) }) { _, baseURL in
            let under = try await CurlHTTPClient(userAgent: "t/1", maxBodySize: 100_000).get(from: baseURL)
            #expect(under.0 == decoded)
            let error = await caughtError { try await CurlHTTPClient(userAgent: "t/1", maxBodySize: 99_999).get(from: baseURL) }
            #expect(error as? HTTPClientError == .bodyTooLarge(limit: 99_999))
        }
    }
}
