/// What the remote gave with a feed to ask it later whether the feed changed (HTTP's `ETag` and
/// `Last-Modified`), kept with the cache. The values are opaque here: only the remote compares them.
public struct CacheValidators: Sendable, Hashable {
    /// The entity tag, verbatim (a weak `W/"…"` one too); `nil` when the remote gave none.
    public var etag: String?
    /// The last-modified date, verbatim as the remote wrote it; `nil` when it gave none.
    public var lastModified: String?
    /// What the validators describe (the URL they came with); `nil` when unknown. They vouch for
    /// that resource only: a key whose URL changed must not ask the new one with the old one's
    /// validators, which a server may answer "not modified" by coincidence.
    public var resource: String?

    /// Creates validators; `nil` for one the remote did not give.
    public init(etag: String? = nil, lastModified: String? = nil, resource: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
        self.resource = resource
    }

    /// These validators when they describe `resource`, else none.
    public func describing(_ resource: String) -> CacheValidators {
        self.resource == resource ? self : .none
    }

    /// No validators: the remote can only be asked for the whole feed.
    public static let none = CacheValidators()

    /// True when there is nothing to ask the remote with.
    public var isEmpty: Bool { etag == nil && lastModified == nil }
}
