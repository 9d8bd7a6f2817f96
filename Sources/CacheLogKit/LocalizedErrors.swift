#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do). Without these it reads
// "The operation could not be completed. (… error 1.)", not the sentence `description` gives.

extension NotAJSONArrayError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}

extension NoUsableDataError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}

extension NoMoreResultsError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}

extension InvalidTimestampError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
