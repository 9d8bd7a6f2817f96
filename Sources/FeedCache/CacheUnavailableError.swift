#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Thrown by ``LocalFeedLoader/loadFeed()`` when the cache holds nothing usable.
public enum CacheUnavailableError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing has been cached (or the cache was deleted or expired).
    case empty
    /// A cache exists, saved at `timestamp`, but it is at least `maxAge` old.
    case expired(timestamp: Date, maxAge: MaxAge)
    /// A cache exists, but its age is counted from `timestamp`, which is later than the moment
    /// it was judged at: a clock set ahead stamped it, so it cannot be trusted to be fresh
    /// (``CachePolicy/validate(_:against:)``).
    case stampedInTheFuture(timestamp: Date)

    /// What is wrong with the cache, as a sentence.
    public var description: String {
        switch self {
        case .empty: "Nothing is cached."
        case .expired(let timestamp, let maxAge):
            "The cache expired: saved at \(timestamp.formatted(.iso8601)), max age \(maxAge)."
        case .stampedInTheFuture(let timestamp):
            "The cache is stamped \(timestamp.formatted(.iso8601)), later than now: a clock set ahead saved it, so it is not trusted."
        }
    }
}
