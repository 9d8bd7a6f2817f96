#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Thrown when the remote said "not modified" but the cache has no feed to refresh: nothing is
/// saved, and the load fails as a remote failure would (a fallback may still answer).
public enum NotModifiedError: Error, Sendable, CustomStringConvertible {
    /// Nothing is cached (the cache was removed after its validators were read, or the remote
    /// answered "not modified" to validators it was never given).
    case noCache
    /// The cached feed cannot be read back or decoded.
    case unreadableCache(any Error)
    /// Another save replaced the cache while the remote was asked: its "not modified" vouches for
    /// the feed it was asked about, not for the one now cached.
    case cacheChanged

    /// One line saying why nothing was refreshed, for the CLI's failure message.
    public var description: String {
        switch self {
        case .noCache: "the remote said not modified, but nothing is cached to refresh"
        case .unreadableCache(let error): "the remote said not modified, but the cached feed cannot be read (\(error))"
        case .cacheChanged: "the remote said not modified, but another save replaced the cache meanwhile; nothing refreshed"
        }
    }
}

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do): the sentence, not
// "The operation could not be completed."
extension NotModifiedError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
