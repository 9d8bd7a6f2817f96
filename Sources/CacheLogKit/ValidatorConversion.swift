// The HTTP layer and the cache each name the validators in their own terms (neither knows the
// other); the entry point carries them across, and so can an app that composes its own.

/// The cache's validators from the HTTP layer's.
extension CacheValidators {
    /// The validators a response from `resource` gave, as the cache keeps them.
    public init(_ http: HTTPValidators, resource: String) {
        self.init(etag: http.etag, lastModified: http.lastModified, resource: resource)
    }
}

/// The HTTP layer's validators from the cache's.
extension HTTPValidators {
    /// The validators the cache kept, as a conditional request sends them.
    public init(_ cache: CacheValidators) {
        self.init(etag: cache.etag, lastModified: cache.lastModified)
    }
}
