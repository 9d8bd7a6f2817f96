/// Thrown when a cached payload cannot be decoded into items (for example after the item type
/// changed shape, or a store handed back bytes that were never a feed).
public struct InvalidCachedFeedError: Error, Sendable, CustomStringConvertible {
    /// The decoding error, for diagnostics.
    public let underlying: any Error

    /// Wraps the decoding error.
    public init(underlying: any Error) {
        self.underlying = underlying
    }

    /// Says the cache could not be decoded, and the decoding error.
    public var description: String {
        "The cached feed could not be decoded: \(underlying)"
    }
}
