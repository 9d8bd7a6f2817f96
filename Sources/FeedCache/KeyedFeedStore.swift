/// Many independent ``FeedStore``s, one per key: what a query-keyed cache (search) stands on.
///
/// Two keys never share a slot. A store backed by an event log uses the key as its log key
/// (``LocalSearchLoader`` asks for keys such as `search:<query>`).
public protocol KeyedFeedStore: Sendable {
    /// The store holding the cache for `key`. Asking twice for a key gives the same cache.
    func store(for key: String) -> any FeedStore
}
