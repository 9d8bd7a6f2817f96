import Foundation

/// The image data cache use cases over an ``ImageDataStore``: save and load, keyed by URL.
public struct LocalImageDataLoader: ImageDataLoader, ImageDataCaching {
    /// Why saving image data failed.
    public enum SaveError: Error, Sendable, Equatable {
        /// The store could not insert the data.
        case failed
    }

    /// Why loading image data failed.
    public enum LoadError: Error, Sendable, Equatable {
        /// The store could not be read.
        case failed
        /// Nothing is cached for the URL.
        case notFound
    }

    private let store: any ImageDataStore

    /// Creates a loader over `store`.
    public init(store: any ImageDataStore) {
        self.store = store
    }

    /// Stores `data` for `url`. Throws ``SaveError/failed`` when the store fails.
    public func save(_ data: Data, for url: URL) async throws {
        do {
            try await store.insert(data, for: url)
        } catch {
            throw SaveError.failed
        }
    }

    /// Delivers the data cached for `url`.
    ///
    /// Throws ``LoadError/notFound`` when nothing is cached, ``LoadError/failed`` when the store
    /// fails, and `CancellationError` when the task was cancelled while the store was read.
    public func loadImageData(from url: URL) async throws -> Data {
        let data: Data?
        do {
            data = try await store.retrieve(dataForURL: url)
        } catch {
            try Task.checkCancellation()
            throw LoadError.failed
        }
        try Task.checkCancellation()
        guard let data else { throw LoadError.notFound }
        return data
    }
}
