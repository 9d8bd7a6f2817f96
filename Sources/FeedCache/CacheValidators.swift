/// What the remote gave with a feed to ask it later whether the feed changed (HTTP's `ETag` and
/// `Last-Modified`), kept with the cache. The values are opaque here: only the remote compares them.
public struct CacheValidators: Sendable, Hashable {
    /// The entity tag, verbatim (a weak `W/"…"` one too); `nil` when the remote gave none.
    public var etag: String?
    /// The last-modified date, verbatim as the remote wrote it; `nil` when it gave none.
    public var lastModified: String?

    /// Creates validators; `nil` for one the remote did not give.
    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// No validators: the remote can only be asked for the whole feed.
    public static let none = CacheValidators()

    /// True when there is nothing to ask the remote with.
    public var isEmpty: Bool { etag == nil && lastModified == nil }
}
