/// Many independent ``FeedStore``s, one per key: what a query-keyed cache (search) stands on.
///
/// Two keys never share a slot; keys are compared byte for byte (as UTF-8), so two spellings
/// that differ only in Unicode normalization are two keys. A store backed by an event log uses the key as its log key
/// (``LocalSearchLoader`` asks for keys such as `search:<query>`).
public protocol KeyedFeedStore: Sendable {
    /// The store holding the cache for `key`. Asking twice for a key gives the same cache.
    func store(for key: String) -> any FeedStore
}
