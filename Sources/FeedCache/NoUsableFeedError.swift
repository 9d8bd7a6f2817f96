#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Thrown by ``FeedLoaderWithFallbackComposite`` when neither loader delivered a feed.
///
/// Carries both causes so that a message can say, for example, "remote: no connection;
/// cache: expired 9 days ago (max age 7d)" — the fallback's error is a
/// ``CacheUnavailableError`` when the fallback is a ``LocalFeedLoader`` with nothing usable.
public struct NoUsableFeedError: Error, Sendable, CustomStringConvertible {
    /// Why the primary loader failed.
    public let primaryError: any Error
    /// Why the fallback loader failed.
    public let fallbackError: any Error

    /// Creates the error from both causes.
    public init(primaryError: any Error, fallbackError: any Error) {
        self.primaryError = primaryError
        self.fallbackError = fallbackError
    }

    /// Both causes, the primary's first.
    public var description: String {
        "No usable feed: primary failed (\(primaryError)), fallback failed (\(fallbackError))"
    }
}

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do): the sentence, not
// "The operation could not be completed."
extension NoUsableFeedError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
