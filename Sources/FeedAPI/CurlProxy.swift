#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension CurlHTTPClient {
    /// Which proxy a request goes through, decided for each request (and each redirect) as curl
    /// decides it, so that a failure of the proxy is named as the proxy's.
    ///
    /// With ``environment`` (the default), curl's variables apply:
    /// - `https_proxy` (or `HTTPS_PROXY`) for an https URL, `http_proxy` for an http one; upper-case
    ///   `HTTP_PROXY` is ignored, as curl ignores it: a CGI program gets the request's `Proxy:`
    ///   header as `HTTP_PROXY` ("httpoxy");
    /// - else `all_proxy` (or `ALL_PROXY`);
    /// - `no_proxy` (or `NO_PROXY`): hosts reached directly.
    ///
    /// A variable that is set but empty counts as set: `http_proxy=` means no proxy for http.
    /// Loopback addresses are proxied like any other unless `no_proxy` names them, as with curl.
    ///
    /// ```swift
    /// let client = CurlHTTPClient(userAgent: "films/1.0", proxy: .init(server: .url("http://proxy:3128"), noProxy: "localhost,10.0.0.0/8"))
    /// ```
    public struct Proxy: Sendable, Hashable {
        /// Where the proxy comes from.
        public enum Server: Sendable, Hashable {
            /// curl's environment variables (`https_proxy`, `http_proxy`, `all_proxy`…).
            case environment
            /// None: every request goes directly, whatever the environment says (curl's `--proxy ""`).
            case none
            /// This proxy for every request (curl's `--proxy`): `http://`, `https://`,
            /// `socks4://`, `socks4a://`, `socks5://` or `socks5h://` and a host, with an optional
            /// port; without a scheme, `http://`.
            case url(String)
        }

        /// Where the proxy comes from.
        public var server: Server
        /// The hosts reached directly (curl's `--noproxy`): a comma-separated list of host names
        /// (each also matching its subdomains; a leading dot is ignored), IP addresses, CIDR
        /// ranges such as `10.0.0.0/8`, or `*` for every host. nil: the environment's
        /// `no_proxy` (or `NO_PROXY`), which applies to an explicit ``Server/url(_:)`` too, as
        /// with curl.
        public var noProxy: String?

        /// A proxy setting: `server`, bypassed for the hosts of `noProxy`.
        public init(server: Server = .environment, noProxy: String? = nil) {
            self.server = server
            self.noProxy = noProxy
        }

        /// curl's environment variables, as curl reads them.
        public static let environment = Proxy()

        /// The schemes a proxy URL may have.
        public static let schemes: Set<String> = ["http", "https", "socks4", "socks4a", "socks5", "socks5h"]

        /// The proxy a request for `url` goes through, as given (credentials and all); nil when it
        /// goes directly.
        ///
        /// - Parameters:
        ///   - url: The URL asked for; its scheme picks the variable, its host is matched
        ///     against the no-proxy list.
        ///   - environment: Looks a variable up; the process's environment by default.
        public func server(for url: URL, environment: (String) -> String? = Proxy.processEnvironment) -> String? {
            guard let host = url.host, !host.isEmpty else { return nil }
            let bypass = noProxy ?? environment("no_proxy") ?? environment("NO_PROXY") ?? ""
            if Self.bypasses(host: host, noProxy: bypass) { return nil }
            let proxy: String? = switch server {
            case .none: nil
            case .url(let proxy): proxy
            case .environment: Self.environmentProxy(scheme: url.scheme?.lowercased() ?? "", environment: environment)
            }
            guard let proxy, !proxy.isEmpty else { return nil }
            return proxy
        }

        /// What a proxy is called in a message: its scheme (`http://` when it has none), host and
        /// port, without the user name and password it may carry.
        public static func displayName(_ proxy: String) -> String {
            let withScheme = proxy.contains("://") ? proxy : "http://" + proxy
            guard let components = URLComponents(string: withScheme), let host = components.host, !host.isEmpty else {
                return proxy.contains("@") ? "(a proxy URL that does not parse)" : proxy
            }
            let scheme = components.scheme?.lowercased() ?? "http"
            let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            return "\(scheme)://\(shownHost)" + (components.port.map { ":\($0)" } ?? "")
        }

        /// Why `proxy` is not a proxy URL curl takes, or nil when it is.
        public static func problem(with proxy: String) -> String? {
            if proxy.isEmpty { return nil }
            // curl would take some of these apart its own way (a leading space, a space in the
            // host): refused here, so that a bad value is a usage error and not a cache served.
            if proxy.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }) {
                return "it holds a space or a control character"
            }
            let withScheme = proxy.contains("://") ? proxy : "http://" + proxy
            guard let components = URLComponents(string: withScheme) else { return "it is not a URL" }
            let scheme = components.scheme?.lowercased() ?? ""
            guard schemes.contains(scheme) else {
                return "its scheme \(scheme) is not one of \(schemes.sorted().joined(separator: ", "))"
            }
            guard let host = components.host, !host.isEmpty else { return "it names no host" }
            if let port = components.port, !(1...65535).contains(port) { return "its port \(port) is not 1 to 65535" }
            return nil
        }

        /// `getenv`: the process's environment at the moment of the request.
        public static func processEnvironment(_ name: String) -> String? {
            getenv(name).map { String(cString: $0) }
        }

        /// curl's variable for `scheme`: lower case first, then upper case (never for http),
        /// then all_proxy and ALL_PROXY.
        private static func environmentProxy(scheme: String, environment: (String) -> String?) -> String? {
            let name = scheme + "_proxy"
            if let proxy = environment(name) { return proxy }
            if scheme != "http", let proxy = environment(name.uppercased()) { return proxy }
            return environment("all_proxy") ?? environment("ALL_PROXY")
        }

        /// Whether `noProxy` names `host`, by curl's rules: `*` alone matches everything; a name
        /// matches itself and its subdomains, case aside, trailing and leading dots aside; an IP
        /// address matches an equal one or a CIDR range holding it.
        static func bypasses(host rawHost: String, noProxy: String) -> Bool {
            if noProxy.isEmpty { return false }
            if noProxy == "*" { return true }
            var host = rawHost
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            let address = IPAddress(host)
            if address == nil, host.hasSuffix(".") { host.removeLast() }
            let tokens = noProxy.split { $0 == "," || $0 == " " || $0 == "\t" }
            for rawToken in tokens {
                var token = Substring(rawToken)
                if let address {
                    let parts = token.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
                    guard let network = IPAddress(String(parts[0])), network.bytes.count == address.bytes.count else { continue }
                    let bits = parts.count > 1 ? Int(parts[1]) : nil
                    if parts.count > 1, bits == nil { continue }
                    if address.isIn(network, prefix: bits ?? 0) { return true }
                } else {
                    if token.hasSuffix(".") { token = token.dropLast() }
                    if token.hasPrefix(".") { token = token.dropFirst() }
                    guard !token.isEmpty else { continue }
                    let name = host.lowercased(), wanted = token.lowercased()
                    if name == wanted || name.hasSuffix("." + wanted) { return true }
                }
            }
            return false
        }
    }
}

/// An IPv4 or IPv6 address's bytes, for `no_proxy`'s CIDR ranges.
private struct IPAddress {
    let bytes: [UInt8]

    init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }

    /// Whether the first `prefix` bits equal `network`'s; 0 (or the whole width): all of them.
    func isIn(_ network: IPAddress, prefix: Int) -> Bool {
        let width = bytes.count * 8
        guard (0...width).contains(prefix) else { return false }
        let bits = prefix == 0 ? width : prefix
        for index in 0..<bytes.count {
            let remaining = bits - index * 8
            if remaining <= 0 { break }
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if bytes[index] & mask != network.bytes[index] & mask { return false }
        }
        return true
    }
}
