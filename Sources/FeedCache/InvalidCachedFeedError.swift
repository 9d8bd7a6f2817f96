#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Thrown when a cached payload cannot be decoded into items (for example after the item type
/// changed shape, or a store handed back bytes that were never a feed).
public struct InvalidCachedFeedError: Error, Sendable, CustomStringConvertible {
    /// The decoding error, for diagnostics.
    public let underlying: any Error
    /// The contract the loader decoded under (``RecordedPolicy/contract``), when it names one.
    public let contract: String?

    /// Wraps the decoding error of a loader whose items follow `contract`.
    public init(underlying: any Error, contract: String? = nil) {
        self.underlying = underlying
        self.contract = contract
    }

    /// Says the cache does not decode, under which contract, and where and why in words
    /// (``DecodingFailure``): `The cached feed does not decode under contract films: item 0 has
    /// no "id".`
    public var description: String {
        let under = contract.map { " under contract \($0)" } ?? ""
        if let error = underlying as? DecodingError {
            return "The cached feed does not decode\(under): \(DecodingFailure(error))."
        }
        return "The cached feed could not be decoded\(under): \(underlying)"
    }
}

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do): the sentence, not
// "The operation could not be completed."
extension InvalidCachedFeedError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
