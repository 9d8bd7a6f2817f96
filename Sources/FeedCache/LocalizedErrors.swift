#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do). Without these it reads
// "The operation could not be completed. (… error 1.)", not the sentence `description` gives.

extension LocalImageDataLoader.SaveError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}

extension LocalImageDataLoader.LoadError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}

extension CacheUnavailableError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}

extension MaxAge.ParseError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}

extension NotModifiedError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}

extension NewerCacheError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}

extension InvalidCachedFeedError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}

extension NoUsableFeedError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
