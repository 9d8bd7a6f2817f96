#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a server gave to ask it later whether a resource changed: its `ETag` and `Last-Modified`
/// header values, kept verbatim (a weak `W/"…"` ETag too: comparing them is the server's job).
public struct HTTPValidators: Sendable, Hashable {
    /// The `ETag` header value, or `nil` when the server sent none.
    public var etag: String?
    /// The `Last-Modified` header value, or `nil` when the server sent none.
    public var lastModified: String?

    /// Creates validators from header values; `nil` for a header the server did not send.
    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// The validators `response` carries.
    public init(response: HTTPResponse) {
        self.init(etag: response.value(forHTTPHeaderField: "ETag"), lastModified: response.value(forHTTPHeaderField: "Last-Modified"))
    }

    /// True when there is nothing to revalidate with.
    public var isEmpty: Bool { etag == nil && lastModified == nil }

    /// The headers that make a GET conditional: `If-None-Match` and `If-Modified-Since`.
    public var requestHeaders: [String: String] {
        var headers: [String: String] = [:]
        headers["If-None-Match"] = etag
        headers["If-Modified-Since"] = lastModified
        return headers
    }

    /// These validators, each one `newer` lacks filled in from `self`: a `304` may leave out a
    /// validator that did not change.
    func updated(by newer: HTTPValidators) -> HTTPValidators {
        HTTPValidators(etag: newer.etag ?? etag, lastModified: newer.lastModified ?? lastModified)
    }
}
