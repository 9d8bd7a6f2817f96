#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// Saves the image data a loader delivered into a cache, then delivers it.
///
/// A failing save does not fail the load; it is logged as a warning.
public struct ImageDataLoaderCacheDecorator: ImageDataLoader {
    private let decoratee: any ImageDataLoader
    private let cache: any ImageDataCaching
    private let logger: Logger?

    /// Decorates `decoratee` so that the data it delivers is saved into `cache`.
    public init(decoratee: any ImageDataLoader, cache: any ImageDataCaching, logger: Logger? = nil) {
        self.decoratee = decoratee
        self.cache = cache
        self.logger = logger
    }

    /// Delivers the decoratee's data for `url`, saved into the cache first.
    ///
    /// A save that fails is logged and the data still delivered.
    ///
    /// - Throws: What the decoratee throws, unchanged.
    public func loadImageData(from url: URL) async throws -> Data {
        let data = try await decoratee.loadImageData(from: url)
        do {
            try await cache.save(data, for: url)
        } catch {
            logger?.warning("Could not cache image data", metadata: ["url": "\(url)", "error": "\(error)"])
        }
        return data
    }
}
