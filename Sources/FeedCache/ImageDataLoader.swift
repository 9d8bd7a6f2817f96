#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Something that delivers the data of an image: the unit of composition for images.
///
/// Cancelling the calling task delivers neither data nor a failure of the loader: conforming
/// types throw `CancellationError`, which callers treat as "no result".
public protocol ImageDataLoader: Sendable {
    /// Delivers the image data found at `url`.
    func loadImageData(from url: URL) async throws -> Data
}
