/// What a remote answered when asked for a feed with the cache's ``CacheValidators``.
public enum ConditionalFeed<Item: Sendable>: Sendable {
    /// The remote sent the feed: its items, and the validators to ask with next time.
    case modified([Item], CacheValidators)
    /// The remote said the cached feed is still current, and gave these validators.
    case notModified(CacheValidators)
}
