#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An ``ImageDataLoader`` made from a closure: the seam for loaders defined elsewhere (a remote one).
public struct AnyImageDataLoader: ImageDataLoader {
    private let load: @Sendable (URL) async throws -> Data

    /// Wraps a closure that delivers the data found at a URL.
    public init(_ load: @escaping @Sendable (URL) async throws -> Data) {
        self.load = load
    }

    /// Delivers what the wrapped closure delivers for `url`.
    ///
    /// - Throws: What the closure throws, unchanged.
    public func loadImageData(from url: URL) async throws -> Data {
        try await load(url)
    }
}
