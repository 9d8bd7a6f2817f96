#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An ``ImageDataStore`` that keeps image data in memory, for tests and previews.
public actor InMemoryImageDataStore: ImageDataStore {
    private var dataByURL: [URL: Data]

    /// Creates a store, empty unless `dataByURL` is given.
    public init(dataByURL: [URL: Data] = [:]) {
        self.dataByURL = dataByURL
    }

    public func insert(_ data: Data, for url: URL) {
        dataByURL[url] = data
    }

    public func retrieve(dataForURL url: URL) -> Data? {
        dataByURL[url]
    }
}
