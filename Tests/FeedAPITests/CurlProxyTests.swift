import FeedAPI
import Foundation
import Testing

/// Which proxy a request goes through, decided as curl decides it, from an environment the test
/// gives (never the process's own).
@Suite("CurlHTTPClient.Proxy")
struct CurlProxyTests {

    private let http = link("http://feeds.example.com/films.json")
    private let https = link("https://feeds.example.com/films.json")

    private func server(_ proxy: CurlHTTPClient.Proxy = .environment, for url: URL, _ environment: [String: String]) -> String? {
        proxy.server(for: url, environment: { environment[$0] })
    }

    @Test
    func environment_takesTheSchemesVariable_thenAllProxy() {
        let variables = ["http_proxy": "http://h:1", "https_proxy": "http://s:2", "all_proxy": "socks5h://a:3"]
        #expect(server(for: http, variables) == "http://h:1")
        #expect(server(for: https, variables) == "http://s:2")
        #expect(server(for: http, ["all_proxy": "socks5h://a:3"]) == "socks5h://a:3")
        #expect(server(for: https, ["ALL_PROXY": "socks5h://a:3"]) == "socks5h://a:3")
        #expect(server(for: http, [:]) == nil)
    }

    @Test
    func environment_readsUpperCaseForHTTPSButNeverHTTP_PROXY() {
        #expect(server(for: https, ["HTTPS_PROXY": "http://s:2"]) == "http://s:2")
        #expect(server(for: https, ["https_proxy": "http://lower:2", "HTTPS_PROXY": "http://upper:2"]) == "http://lower:2")
        #expect(server(for: http, ["HTTP_PROXY": "http://attacker:80"]) == nil)
        #expect(server(for: http, ["HTTP_PROXY": "http://attacker:80", "ALL_PROXY": "http://a:3"]) == "http://a:3")
    }

    @Test
    func aVariableSetEmpty_meansNoProxy_notTheNextVariable() {
        #expect(server(for: http, ["http_proxy": "", "all_proxy": "http://a:3"]) == nil)
    }

    @Test
    func noProxy_bypassesNamesTheirSubdomainsAddressesAndRanges() {
        let proxy = ["http_proxy": "http://h:1"]
        let bypassed: [(String, String)] = [
            ("http://feeds.example.com/", "example.com"),
            ("http://feeds.example.com/", ".example.com"),
            ("http://example.com./", "example.com"),
            ("http://FEEDS.Example.COM/", "feeds.example.com"),
            ("http://127.0.0.1:8080/", "localhost, 127.0.0.1"),
            ("http://10.1.2.3/", "10.0.0.0/8"),
            ("http://[::1]:8080/", "::1"),
            ("http://[fd00::5]/", "fd00::/8"),
            ("http://anything/", "*"),
        ]
        for (url, list) in bypassed {
            #expect(server(for: link(url), proxy.merging(["no_proxy": list]) { $1 }) == nil, "\(url) \(list)")
            #expect(server(for: link(url), proxy.merging(["NO_PROXY": list]) { $1 }) == nil, "\(url) \(list)")
        }
        let proxied: [(String, String)] = [
            ("http://notexample.com/", "example.com"),
            ("http://example.com.evil/", "example.com"),
            ("http://11.1.2.3/", "10.0.0.0/8"),
            ("http://127.0.0.1/", "localhost"),
            ("http://anything/", "*.example.com"),
        ]
        for (url, list) in proxied {
            #expect(server(for: link(url), proxy.merging(["no_proxy": list]) { $1 }) == "http://h:1", "\(url) \(list)")
        }
    }

    @Test
    func anExplicitNoProxyList_replacesTheEnvironments() {
        let proxy = CurlHTTPClient.Proxy(server: .environment, noProxy: "other.example")
        #expect(server(proxy, for: http, ["http_proxy": "http://h:1", "no_proxy": "example.com"]) == "http://h:1")
        #expect(server(CurlHTTPClient.Proxy(noProxy: ""), for: http, ["http_proxy": "http://h:1", "no_proxy": "*"]) == "http://h:1")
    }

    @Test
    func anExplicitProxy_winsOverTheVariables_butNoProxyStillApplies_asWithCurl() {
        let proxy = CurlHTTPClient.Proxy(server: .url("http://mine:3128"))
        #expect(server(proxy, for: https, ["https_proxy": "http://s:2"]) == "http://mine:3128")
        #expect(server(proxy, for: https, ["no_proxy": "example.com"]) == nil)
        #expect(server(CurlHTTPClient.Proxy(server: .none), for: https, ["https_proxy": "http://s:2"]) == nil)
    }

    @Test
    func displayName_dropsTheCredentials_andSaysTheScheme() {
        #expect(CurlHTTPClient.Proxy.displayName("http://user:secret@proxy.example:3128") == "http://proxy.example:3128")
        #expect(CurlHTTPClient.Proxy.displayName("proxy.example:3128") == "http://proxy.example:3128")
        #expect(CurlHTTPClient.Proxy.displayName("SOCKS5H://proxy.example") == "socks5h://proxy.example")
    }

    @Test
    func problem_namesWhatIsNotAProxyURL() {
        #expect(CurlHTTPClient.Proxy.problem(with: "http://proxy:3128") == nil)
        #expect(CurlHTTPClient.Proxy.problem(with: "proxy:3128") == nil)
        #expect(CurlHTTPClient.Proxy.problem(with: "socks5h://127.0.0.1:1080") == nil)
        #expect(CurlHTTPClient.Proxy.problem(with: "") == nil)
        #expect(CurlHTTPClient.Proxy.problem(with: "ftp://proxy:21")?.contains("scheme ftp") == true)
        #expect(CurlHTTPClient.Proxy.problem(with: "http://") != nil)
    }
}

/// The URL `text` names (a test's literal, which parses).
private func link(_ text: String) -> URL { URL(string: text) ?? URL(fileURLWithPath: "/") }
