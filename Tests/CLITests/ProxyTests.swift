import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// Proxies through the built binary: `--proxy` and `--noproxy`, and curl's environment variables,
/// against a loopback origin and a loopback forward proxy (a server that answers requests whose
/// target is an absolute URL, as a proxy gets them); a proxy that cannot be reached is named.
@Suite("cachelog load: proxies", .hangGuard)
struct ProxyTests {
    /// One way of choosing a proxy, and whether the request goes through it. `PROXY` stands for the
    /// test proxy's URL.
    struct Case: Sendable, CustomTestStringConvertible {
        var environment: [String: String] = [:]
        var arguments: [String] = []
        var proxied: Bool

        var testDescription: String {
            let variables = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return (variables + arguments).joined(separator: " ") + (proxied ? ": through the proxy" : ": directly")
        }
    }

    static let cases: [Case] = [
        Case(arguments: ["--proxy", "PROXY"], proxied: true),
        Case(arguments: ["--proxy", "PROXY", "--noproxy", "127.0.0.1"], proxied: false),
        Case(arguments: ["--proxy", "PROXY", "--noproxy", "example.com,127.0.0.0/8"], proxied: false),
        Case(environment: ["no_proxy": "127.0.0.1"], arguments: ["--proxy", "PROXY"], proxied: false),
        Case(environment: ["http_proxy": "PROXY"], proxied: true),
        Case(environment: ["http_proxy": "PROXY", "no_proxy": "127.0.0.1"], proxied: false),
        Case(environment: ["http_proxy": "PROXY", "NO_PROXY": "*"], proxied: false),
        Case(environment: ["http_proxy": "PROXY", "no_proxy": "localhost"], proxied: true),
        Case(environment: ["http_proxy": "PROXY"], arguments: ["--noproxy", "127.0.0.1"], proxied: false),
        Case(environment: ["http_proxy": "PROXY"], arguments: ["--proxy", ""], proxied: false),
        // Upper case is ignored for http, as curl ignores it ("httpoxy").
        Case(environment: ["HTTP_PROXY": "PROXY"], proxied: false),
        Case(environment: ["https_proxy": "PROXY", "HTTPS_PROXY": "PROXY"], proxied: false),
        Case(environment: ["all_proxy": "PROXY"], proxied: true),
        Case(environment: ["ALL_PROXY": "PROXY"], proxied: true),
        Case(environment: ["http_proxy": "", "ALL_PROXY": "PROXY"], proxied: false),
    ]

    @Test(arguments: cases)
    func load_goesThroughTheProxyCurlWouldUse(_ choice: Case) async throws {
        let sandbox = try Sandbox()
        let proxy = LoopbackHTTPServer(handler: { request in
            request.target.hasPrefix("http://") ? .json(Feeds.films) : .notFound
        })
        let proxyURL = try proxy.start().absoluteString.trimmingSuffix("/")
        defer { proxy.stop() }
        let environment = choice.environment.mapValues { $0 == "PROXY" ? proxyURL : $0 }
        let arguments = choice.arguments.map { $0 == "PROXY" ? proxyURL : $0 }
        let origin = sandbox.url("/films.json")

        let result = try await sandbox.run(
            ["--db", sandbox.db, "load", origin, "--key", "films", "--contract", "films"] + arguments, environment: environment)
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stdoutLines.first?.hasPrefix("films: 2 items from remote") == true, "\(result)")
        if choice.proxied {
            #expect(proxy.requests.map(\.target) == [origin])
            #expect(sandbox.server.requestCount == 0)
        } else {
            #expect(proxy.requestCount == 0)
            #expect(sandbox.server.requests.map(\.target) == ["/films.json"])
        }
    }

    @Test
    func aProxyThatCannotBeReached_isNamed() async throws {
        let sandbox = try Sandbox()
        let dead = try DeadPort.shared().port
        let byOption = try await sandbox.cachelog("load", sandbox.url("/films.json"), "--key", "films", "--proxy", "http://127.0.0.1:\(dead)")
        let byVariable = try await sandbox.run(
            ["--db", sandbox.db, "load", sandbox.url("/films.json"), "--key", "films"], environment: ["http_proxy": "127.0.0.1:\(dead)"])
        for result in [byOption, byVariable] {
            #expect(result.status == ExitCode.noUsableData, "\(result)")
            #expect(result.stderrLines.count == 1, "\(result)")
            #expect(result.stderr.hasPrefix("cachelog: no usable data for films: remote not reached: proxy http://127.0.0.1:\(dead) unreachable: "), "\(result)")
            #expect(result.stderr.hasSuffix("; no cache\n"), "\(result)")
        }
        #expect(sandbox.server.requestCount == 0)
    }

    @Test
    func aProxysPassword_isNeverPrinted() async throws {
        let sandbox = try Sandbox()
        let dead = try DeadPort.shared().port
        let result = try await sandbox.cachelog(
            "load", sandbox.url("/films.json"), "--key", "films", "--proxy", "http://someone:s3cr3t@127.0.0.1:\(dead)")
        #expect(result.status == ExitCode.noUsableData, "\(result)")
        #expect(result.stderr.contains("proxy http://127.0.0.1:\(dead) unreachable"), "\(result)")
        #expect(!result.stderr.contains("s3cr3t"), "\(result)")
    }

    /// A proxy that answers but will not pass the request on (it wants credentials) is named as
    /// the proxy, over plain http (its 407 answer) and for https (the tunnel it refused), not
    /// taken for the remote's answer.
    @Test
    func aProxyThatRefuses_isNamed_notTakenForTheRemote() async throws {
        let sandbox = try Sandbox()
        let proxy = LoopbackHTTPServer(handler: { _ in HTTPResponse(status: 407, headers: [HTTPHeader("Proxy-Authenticate", "Basic realm=\"proxy\"")]) })
        let proxyURL = try proxy.start().absoluteString.trimmingSuffix("/")
        defer { proxy.stop() }

        let plain = try await sandbox.cachelog("load", sandbox.url("/films.json"), "--key", "films", "--proxy", proxyURL)
        let tunnelled = try await sandbox.cachelog("load", "https://127.0.0.1:9/films.json", "--key", "films", "--proxy", proxyURL)

        #expect(plain.status == ExitCode.noUsableData, "\(plain)")
        #expect(plain.stderrLines == [
            "cachelog: no usable data for films: remote not reached: proxy \(proxyURL) refused the request: it answered HTTP 407, Proxy Authentication Required; no cache",
        ], "\(plain)")
        #expect(tunnelled.status == ExitCode.noUsableData, "\(tunnelled)")
        #expect(tunnelled.stderr.hasPrefix("cachelog: no usable data for films: remote not reached: proxy \(proxyURL) refused the request: CONNECT tunnel failed, response 407"), "\(tunnelled)")
        #expect(sandbox.server.requestCount == 0)
    }

    @Test(arguments: ["ftp://127.0.0.1:3128", "http://", "::", "http://127.0.0.1:99999", "127.0.0.1:0", " 127.0.0.1:3128", "http://a b:80",
                      "http://user:pa ss@127.0.0.1:3128"])
    func proxy_thatIsNotAProxyURL_isAUsageError(_ value: String) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.cachelog("load", sandbox.url("/films.json"), "--key", "films", "--proxy", value)
        #expect(result.status == ExitCode.usage, "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stderr.hasPrefix("cachelog: --proxy must be a proxy URL such as http://proxy.example:3128, not '\(value)': "), "\(result)")
        #expect(sandbox.server.requestCount == 0)
    }

    @Test
    func image_goesThroughTheProxyToo() async throws {
        let sandbox = try Sandbox()
        let proxy = LoopbackHTTPServer(handler: { request in
            request.target.hasPrefix("http://") ? HTTPResponse(status: 200, body: Data("pixels".utf8)) : .notFound
        })
        let proxyURL = try proxy.start().absoluteString
        defer { proxy.stop() }
        let result = try await sandbox.cachelog("image", sandbox.url("/poster.jpg"), "--proxy", proxyURL, "--out", sandbox.path("poster"))
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.path("poster"))) == Data("pixels".utf8))
        #expect(proxy.requests.map(\.target) == [sandbox.url("/poster.jpg")])
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
