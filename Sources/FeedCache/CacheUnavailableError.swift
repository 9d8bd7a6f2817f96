#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Thrown by ``LocalFeedLoader/loadFeed()`` when the cache holds nothing usable.
public enum CacheUnavailableError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing has been cached (or the cache was deleted or expired, and the store cannot say how).
    case empty
    /// Nothing is cached: the last cache ended as `ending` says (a store that keeps history knows).
    case gone(CacheEnding)
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
        case .gone(.evicted(let at, let limit)):
            "Nothing is cached: the cache was evicted at \(at.formatted(.iso8601)), when the store passed its size limit\(limit.map { " of \($0) bytes" } ?? "")."
        case .gone(.removed(let at)): "Nothing is cached: the cache was removed at \(at.formatted(.iso8601))."
        case .gone(.expired(let at, let timestamp, let maxAge)):
            "Nothing is cached: validation expired the cache saved at \(timestamp.formatted(.iso8601)) at \(at.formatted(.iso8601)), max age \(Int(maxAge)) s."
        case .gone(.unreadable(let at)): "Nothing is cached: the cache was deleted at \(at.formatted(.iso8601)), as it could not be read back."
        case .expired(let timestamp, let maxAge):
            "The cache expired: saved at \(timestamp.formatted(.iso8601)), max age \(maxAge)."
        case .stampedInTheFuture(let timestamp):
            "The cache is stamped \(timestamp.formatted(.iso8601)), later than now: a clock set ahead saved it, so it is not trusted."
        }
    }
}

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do): the sentence, not
// "The operation could not be completed."
extension CacheUnavailableError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
