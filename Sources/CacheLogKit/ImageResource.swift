#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Image data at a URL, cached under `image:URL` (the film and image feed apps' image data use
/// case): while the cached copy is fresh it is delivered with no request at all; otherwise the
/// remote is asked (a 200 with at least one byte) and what it sends is cached.
///
/// A save records the max age (so a cron job judges the image by it, not by a default), follows
/// the honest-save rule (``CacheLoad/cacheSave``), and never replaces a newer copy; an unchanged
/// image costs a reference to the bytes already stored, not a second copy.
public struct ImageResource: Sendable {
    /// Where the image is.
    public let url: URL
    /// The cache key, `image:URL`.
    public let key: String
    /// How long the cached copy serves. `nil` (the default): the max age it was saved under, and
    /// a new save records 7 days.
    public var maxAge: MaxAge?
    /// Which side is asked first: cache first unless told otherwise.
    public var strategy: CacheStrategy
    let client: CacheClient

    init(client: CacheClient, url: URL) {
        self.client = client
        self.url = url
        key = CacheKey.image(url)
        strategy = FeedContract<Data>.imageData.defaults.strategy
    }


    /// Loads the image data: the cached copy while fresh, else the remote's, cached.
    ///
    /// - Throws: ``NoUsableDataError`` when neither side delivered; `CancellationError` when the
    ///   task was cancelled (nothing is delivered and nothing cached then).
    public func load() async throws -> CacheLoad<Data> {
        var resource = FeedResource(client: client, key: key, url: url, contract: .imageData)
        resource.maxAge = maxAge
        resource.strategy = strategy
        let loaded = try await resource.load()
        return loaded
    }
}
