#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Performs HTTP GET requests. The seam between the remote loaders and the network.
///
/// Implementations deliver any response the server gave (every status code counts as a
/// response); they throw only when no acceptable response arrived. When the calling task is
/// cancelled they throw `CancellationError`.
public protocol HTTPClient: Sendable {
    /// Fetches `url` and returns the body and the response.
    func get(from url: URL) async throws -> (Data, HTTPResponse)

    /// Fetches `url` with `headers` added to the request (for example the validators of a
    /// conditional request), and returns the body and the response.
    func get(from url: URL, headers: [String: String]) async throws -> (Data, HTTPResponse)
}

extension HTTPClient {
    /// The body limit clients apply unless told otherwise: 10 MiB.
    public static var defaultMaxBodySize: Int { 10 * 1024 * 1024 }

    /// Fetches `url` without `headers`: a client that cannot send headers makes the plain request.
    ///
    /// The server answers as one that ignores validators would, with the whole resource.
    ///
    /// - Throws: What ``get(from:)`` throws.
    public func get(from url: URL, headers: [String: String]) async throws -> (Data, HTTPResponse) {
        try await get(from: url)
    }
}

/// Why an ``HTTPClient`` produced no response.
public enum HTTPClientError: Error, Equatable, CustomStringConvertible {
    /// The URL's scheme is not `http` or `https`; no request was made.
    case unsupportedURL(URL)
    /// The body is larger than the client's limit (known from `Content-Length` or counted while
    /// receiving); the transfer was cancelled and the bytes received so far were discarded.
    case bodyTooLarge(limit: Int)
    /// The request failed in transport: no server, connection lost, timeout, TLS failure...
    case transport(code: TransportCode, message: String)
    /// The response was not an HTTP response.
    case nonHTTPResponse
    /// The client cannot make requests on this machine (a library it loads is missing); the
    /// message says what to install.
    case unavailable(String)
    /// A redirect was not followed: it led from `https` to plain `http` (which would let whoever
    /// sits on the plain path answer for a resource asked for over TLS), or to a scheme other
    /// than `http` and `https` (`ftp:`, `file:`…). `to` is the redirect's target as the server
    /// gave it, resolved against `from`.
    case redirectRefused(from: URL, to: String)
    /// The proxy the request went through could not be reached or refused it; `proxy` names it
    /// (without credentials), `message` says what failed.
    case proxyFailed(proxy: String, code: TransportCode, message: String)

    /// A readable explanation of the failure.
    public var description: String {
        switch self {
        case let .unsupportedURL(url):
            "unsupported URL \(url.absoluteString): only http and https URLs can be loaded"
        case let .bodyTooLarge(limit):
            "response body is larger than the limit of \(limit) bytes"
        case let .transport(code, message):
            failure ?? "transport failure (URLError \(code.rawValue)): \(message)"
        case .nonHTTPResponse:
            "the response was not an HTTP response"
        case let .unavailable(message):
            "no HTTP client: \(message)"
        case .redirectRefused, .proxyFailed:
            failure ?? "transport failure"
        }
    }

    /// The scheme of a redirect's target, lowercased: what precedes its first `:`.
    static func scheme(of target: String) -> String {
        String(target.prefix { $0 != ":" }).lowercased()
    }

    /// What failed, for the failures that are no plain outage (waiting does not fix them): an
    /// untrusted certificate or a failed handshake, a refused redirect, too many redirects, a
    /// proxy that failed. nil for others.
    var failure: String? {
        switch self {
        case let .redirectRefused(from, to):
            let scheme = Self.scheme(of: to)
            if scheme == "http", from.scheme?.lowercased() == "https" {
                return "redirect to \(to) refused: it leaves https for plain http"
            }
            return "redirect to \(to) refused: the \(scheme.isEmpty ? "(no)" : scheme) scheme is not followed, only http and https"
        case let .proxyFailed(proxy, code, message) where code == .userAuthenticationRequired || message.hasPrefix("CONNECT tunnel failed"):
            return "proxy \(proxy) refused the request: \(message)"
        case let .proxyFailed(proxy, _, message):
            return "proxy \(proxy) unreachable: \(message)"
        case let .transport(code, message) where code == .httpTooManyRedirects:
            return "too many redirects: \(message)"
        case let .transport(_, message) where tlsFailure == nil && !message.isEmpty:
            // The transport's own words name the host and port and what failed ("Failed to
            // connect to 127.0.0.1 port 9: Couldn't connect to server"), without its timing.
            return "unreachable: " + Self.untimed(message)
        default:
            return tlsFailure
        }
    }

    /// `message` without libcurl's " after N ms" (or " after N milliseconds"): how long a failure
    /// took is no part of what failed, and differs from one try to the next.
    static func untimed(_ message: String) -> String {
        var words = message.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        var index = 0
        while index + 2 < words.count {
            let unit = String(words[index + 2].prefix { $0.isLetter })
            if words[index] == "after", Int(words[index + 1]) != nil, unit == "ms" || unit == "milliseconds" {
                // Keep what followed the unit (its colon: "… port 9 after 0 ms: Couldn't …").
                let rest = String(words[index + 2].dropFirst(unit.count))
                words.removeSubrange(index...(index + 2))
                if !rest.isEmpty, index > 0 { words[index - 1] += rest }
            } else {
                index += 1
            }
        }
        return words.joined(separator: " ")
    }

    /// What failed, when it is TLS: `certificate not trusted: …` (the peer's certificate chain or
    /// name did not verify) or `TLS handshake failed: …`; nil for other failures.
    var tlsFailure: String? {
        guard case let .transport(code, message) = self else { return nil }
        switch code {
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid:
            return "certificate not trusted: \(message)"
        case .secureConnectionFailed, .clientCertificateRejected, .clientCertificateRequired:
            return "TLS handshake failed: \(message)"
        default:
            return nil
        }
    }
}

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do): the sentence, not
// "The operation could not be completed."
extension HTTPClientError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
