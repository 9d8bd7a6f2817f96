import FeedAPI
import FeedCache

// The HTTP layer and the cache each name the validators in their own terms (neither knows the
// other); the composition root carries them across.

extension CacheValidators {
    /// The validators a response from `resource` gave, as the cache keeps them.
    init(_ http: HTTPValidators, resource: String) {
        self.init(etag: http.etag, lastModified: http.lastModified, resource: resource)
    }
}

extension HTTPValidators {
    /// The validators the cache kept, as a conditional request sends them.
    init(_ cache: CacheValidators) {
        self.init(etag: cache.etag, lastModified: cache.lastModified)
    }
}
