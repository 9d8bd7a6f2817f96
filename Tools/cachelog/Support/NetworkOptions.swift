import ArgumentParser
import CacheLog
import FeedAPI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How `load` and `image` reach the remote (`--timeout`, `--cacert`, `--proxy`, `--noproxy`,
/// `--max-body`), and the client they make of it.
///
/// The options themselves are declared by each command (``NetworkCommand``), with the help and
/// defaults here, rather than as an `@OptionGroup`: ArgumentParser builds a group's arguments by
/// reflecting over it each time it reads the command's arguments (six times a start), with
/// runtime conformance lookups of its own (the group's type as `ParsableArguments`,
/// `ParsableCommand` and `CustomReflectable`, the wrapper's, its coding keys'), 5 % of the
/// instructions of a `cachelog load` that the cache serves (callgrind: 21.4 M, 20.4 M without the
/// group). The help, the usage, the completions and the manual page are the same either way.
struct NetworkOptions {
    /// What `--max-body` accepts: from 1 KiB (no feed is smaller) to 1 GiB (a body is held in
    /// memory, then compressed into one record).
    static let maxBodyRange = 1024...(1 << 30)

    /// `--timeout` when not given, in seconds.
    static let defaultTimeout = 60

    /// The environment variable that names the libcurl to load instead of the platform's.
    static let libcurlVariable = "CACHELOG_LIBCURL"

    /// What the network options' help says of the environment (load's help; image refers to it).
    static let environmentHelp = """
        Proxies: as with curl, a request goes through the proxy --proxy names, else the one of \
        the environment: https_proxy (or HTTPS_PROXY) for an https URL, http_proxy for an http \
        one (upper-case HTTP_PROXY is ignored, as curl ignores it: a CGI program gets a \
        request's Proxy: header as HTTP_PROXY), else all_proxy (or ALL_PROXY); http://, \
        https://, socks4://, socks4a://, socks5:// and socks5h:// proxies work. Hosts in \
        --noproxy, else in no_proxy (or NO_PROXY), are reached directly; 127.0.0.1 and \
        localhost are proxied too unless listed there. --proxy "" goes directly whatever the \
        environment says. A proxy that cannot be reached, or refuses the request, is named: \
        remote not reached: proxy http://HOST:PORT unreachable: … (or refused the request: …). \
        --cacert is for the remote: an https proxy's own certificate is checked against the \
        system's store (curl's --proxy-cacert is not offered).

        CACHELOG_LIBCURL names the libcurl file to load (a path, or a name the dynamic loader \
        looks up) instead of libcurl.so.4.
        """

    /// Each option's help, as the commands declare it.
    enum Help {
        static var timeout: ArgumentHelp {
            ArgumentHelp(
                "Seconds the remote may take in all, from connecting to the last byte (1 to 3600).",
                discussion: "A remote that takes longer counts as unreachable: the cache serves, as when offline.",
                valueName: "seconds")
        }

        static var cacert: ArgumentHelp {
            ArgumentHelp(
                "Trust only the PEM certificates in this file, not the system's store, as curl's --cacert does.",
                discussion: "A file that holds no certificate (empty, not PEM) is a usage error.",
                valueName: "file")
        }

        static var proxy: ArgumentHelp {
            ArgumentHelp(
                "Go through this proxy, as curl's --proxy: [scheme://]host[:port], scheme http (the default), https, socks4, socks4a, socks5 or socks5h; \"\" for none. (default: the environment's, see load --help)",
                valueName: "url")
        }

        static var noProxy: ArgumentHelp {
            ArgumentHelp(
                "Reach these hosts directly, as curl's --noproxy: a comma-separated list of names (each with its subdomains), IP addresses and CIDR ranges, or * for all. (default: $no_proxy, else $NO_PROXY)",
                valueName: "list")
        }

        static var maxBody: ArgumentHelp {
            ArgumentHelp(
                "The largest body accepted, in bytes (1024 to 1073741824); a larger one counts as invalid data.",
                valueName: "bytes")
        }
    }

    let timeout: Int
    let cacert: CACertificatesArgument?
    let proxy: String?
    let noProxy: String?
    let maxBody: Int

    /// Checked first by the commands' `validate()`, as ArgumentParser checked the option group
    /// before the command: a bad value is a usage error.
    func validate() throws {
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 3600 seconds") }
        guard Self.maxBodyRange.contains(maxBody) else {
            throw ValidationError("--max-body must be between \(Self.maxBodyRange.lowerBound) and \(Self.maxBodyRange.upperBound) bytes")
        }
        if let cacert, case .failure(let error) = cacert.certificates {
            switch error.problem {
            case .unreadable, .directory:
                throw ValidationError("--cacert must name a readable file of PEM certificates, not '\(cacert.path)'")
            case .noCertificate, .tooLarge, .malformedCertificate:
                throw ValidationError("--cacert: \(error)")
            }
        }
        if let proxy, let problem = CurlHTTPClient.Proxy.problem(with: proxy) {
            throw ValidationError("--proxy must be a proxy URL such as http://proxy.example:3128, not '\(proxy)': \(problem)")
        }
    }

    /// The client these options describe; its User-Agent names the tool and its version.
    func client() -> CurlHTTPClient {
        let server: CurlHTTPClient.Proxy.Server = switch proxy {
        case nil: .environment
        case ""?: .none
        case let proxy?: .url(proxy)
        }
        let library = EnvironmentVariables.value(Self.libcurlVariable).flatMap { $0.isEmpty ? nil : [$0] }
        return CurlHTTPClient(
            userAgent: "cachelog/\(EventLog.version)", maxBodySize: maxBody, timeout: .seconds(timeout),
            caCertificates: try? cacert?.certificates.get(), proxy: CurlHTTPClient.Proxy(server: server, noProxy: noProxy),
            libraryNames: library ?? CurlHTTPClient.defaultLibraryNames)
    }
}

/// A command that takes the network options: it declares them, each as
/// `@Option(help: NetworkOptions.Help.timeout) var timeout = NetworkOptions.defaultTimeout`,
/// `--cacert` with `transform: CACertificatesArgument.init`, `--noproxy` and `--max-body` by
/// those names (`.customLong`), `--max-body` defaulting to `CurlHTTPClient.defaultMaxBodySize`.
protocol NetworkCommand {
    var timeout: Int { get }
    var cacert: CACertificatesArgument? { get }
    var proxy: String? { get }
    var noProxy: String? { get }
    var maxBody: Int { get }
}

extension NetworkCommand {
    var network: NetworkOptions {
        NetworkOptions(timeout: timeout, cacert: cacert, proxy: proxy, noProxy: noProxy, maxBody: maxBody)
    }
}

/// `--cacert FILE`, read once while the command line is parsed (a pipe, `--cacert <(…)`, can be
/// read only once): the certificates, or why the file holds none, which `validate()` reports as
/// a usage error.
struct CACertificatesArgument {
    let path: String
    let certificates: Result<PEMCertificates, PEMCertificatesError>

    init(_ path: String) {
        self.path = path
        certificates = Result { () throws(PEMCertificatesError) in try PEMCertificates(contentsOfFile: path) }
    }
}
