#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Loads image data from a primary loader and, when it fails, from a fallback
/// (typically: the local cache, then the remote end).
///
/// When both fail, the fallback's error is rethrown. A cancelled task is not a failure: the
/// fallback is not tried and `CancellationError` is thrown.
public struct ImageDataLoaderWithFallbackComposite: ImageDataLoader {
    private let primary: any ImageDataLoader
    private let fallback: any ImageDataLoader

    /// Composes `primary` with `fallback`.
    public init(primary: any ImageDataLoader, fallback: any ImageDataLoader) {
        self.primary = primary
        self.fallback = fallback
    }

    /// Delivers the primary's data for `url`, or the fallback's when the primary fails.
    ///
    /// - Throws: The fallback's error, unchanged, when both fail; `CancellationError` when the
    ///   task is cancelled (the fallback is then not tried).
    public func loadImageData(from url: URL) async throws -> Data {
        do {
            return try await primary.loadImageData(from: url)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            try Task.checkCancellation()
            return try await fallback.loadImageData(from: url)
        }
    }
}
