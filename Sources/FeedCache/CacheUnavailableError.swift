import Foundation

/// Thrown by ``LocalFeedLoader/loadFeed()`` when the cache holds nothing usable.
public enum CacheUnavailableError: Error, Sendable, Hashable {
    /// Nothing has been cached (or the cache was deleted or expired).
    case empty
    /// A cache exists, saved at `timestamp`, but it is at least `maxAge` old.
    case expired(timestamp: Date, maxAge: MaxAge)
}
