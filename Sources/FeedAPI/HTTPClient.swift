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

    /// A client that cannot send headers makes the plain request: the server answers as one that
    /// ignores validators would, with the whole resource.
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

    /// A readable explanation of the failure.
    public var description: String {
        switch self {
        case let .unsupportedURL(url):
            "unsupported URL \(url.absoluteString): only http and https URLs can be loaded"
        case let .bodyTooLarge(limit):
            "response body is larger than the limit of \(limit) bytes"
        case let .transport(code, message):
            tlsFailure ?? "transport failure (URLError \(code.rawValue)): \(message)"
        case .nonHTTPResponse:
            "the response was not an HTTP response"
        case let .unavailable(message):
            "no HTTP client: \(message)"
        }
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
