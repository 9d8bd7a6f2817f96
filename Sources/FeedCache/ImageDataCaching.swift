#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Something that keeps image data for later: what ``ImageDataLoaderCacheDecorator`` saves into.
public protocol ImageDataCaching: Sendable {
    /// Saves `data` as the image data for `url`.
    func save(_ data: Data, for url: URL) async throws
}
