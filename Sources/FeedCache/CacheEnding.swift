#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a store's last cache ended, for a store that keeps history (``FeedStore/ending()``): so
/// that an empty cache can say why it is empty.
public enum CacheEnding: Sendable, Hashable {
    /// Evicted at `at` because the store passed its size limit (`sizeLimit` bytes, when known).
    case evicted(at: Date, sizeLimit: Int?)
    /// Removed at `at` on request (``DeletionReason/explicit``).
    case removed(at: Date)
    /// Expired by validation at `at`: the cache saved at `timestamp` was `maxAge` seconds old or more.
    case expired(at: Date, timestamp: Date, maxAge: TimeInterval)
    /// Deleted at `at` because it could not be read back (``DeletionReason/retrievalError``).
    case unreadable(at: Date)
}
