/// Why a cached feed is being deleted, so that a store that keeps history can record it.
///
/// Replacing a cache with a new one is not a deletion: see ``FeedStore/replace(with:timestamp:policy:validators:)``.
/// Removing a cache because it is too old is not a deletion either: see
/// ``FeedStore/expireCachedFeed(timestamp:maxAge:)``.
public enum DeletionReason: String, Sendable, Equatable, Hashable, CaseIterable {
    /// Someone asked for the cache to go (a user action, a `clear` command, a test).
    case explicit
    /// The cache could not be read back; validation removed it so the next save starts clean.
    case retrievalError
}
