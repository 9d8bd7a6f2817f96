/// Where the payload of a put came from: a load that fetched it, or the app that wrote it
/// (`FeedResource.write`, TanStack Query's `setQueryData`): what the audit trail tells apart.
public enum PutOrigin: String, Sendable, CaseIterable {
    /// A load delivered it from the remote (every put before origins were recorded).
    case fetched
    /// The app wrote it into the cache itself, without a fetch.
    case written

    /// The origin a put's metadata records (``CacheLogFeedStore/originName``).
    public init(metadata: [String: String]) {
        self = metadata[CacheLogFeedStore.originName] == PutOrigin.written.rawValue ? .written : .fetched
    }
}
