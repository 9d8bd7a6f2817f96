import Foundation

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
    case transport(code: URLError.Code, message: String)
    /// The response was not an HTTP response.
    case nonHTTPResponse

    /// A readable explanation of the failure.
    public var description: String {
        switch self {
        case let .unsupportedURL(url):
            "unsupported URL \(url.absoluteString): only http and https URLs can be loaded"
        case let .bodyTooLarge(limit):
            "response body is larger than the limit of \(limit) bytes"
        case let .transport(code, message):
            "transport failure (URLError \(code.rawValue)): \(message)"
        case .nonHTTPResponse:
            "the response was not an HTTP response"
        }
    }
}
