#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CacheLog
import FeedCache
import FeedCacheLog

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do). Without these it reads
// "The operation could not be completed. (… error 1.)", not the sentence `description` gives.

extension HistoryReport.SelectionError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
