#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The image data cache use cases over an ``ImageDataStore``: save and load, keyed by URL.
public struct LocalImageDataLoader: ImageDataLoader, ImageDataCaching {
    /// Why saving image data failed: the store's error, kept.
    public enum SaveError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The store could not insert the data, for `reason` (the store's error, as a sentence).
        case failed(reason: String)

        /// Says that the save failed, and why.
        public var description: String {
            switch self {
            case .failed(let reason): "The image data could not be cached: \(reason)"
            }
        }
    }

    /// Why loading image data failed.
    public enum LoadError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The store could not be read, for `reason` (the store's error, as a sentence).
        case failed(reason: String)
        /// Nothing is cached for the URL.
        case notFound

        /// Says what went wrong.
        public var description: String {
            switch self {
            case .failed(let reason): "The cached image data could not be read: \(reason)"
            case .notFound: "No image data is cached for the URL."
            }
        }
    }

    private let store: any ImageDataStore

    /// Creates a loader over `store`.
    public init(store: any ImageDataStore) {
        self.store = store
    }

    /// Stores `data` for `url`.
    ///
    /// - Throws: ``SaveError/failed(reason:)`` when the store fails.
    public func save(_ data: Data, for url: URL) async throws {
        do {
            try await store.insert(data, for: url)
        } catch {
            throw SaveError.failed(reason: "\(error)")
        }
    }

    /// Delivers the data cached for `url`.
    ///
    /// - Throws: ``LoadError/notFound`` when nothing is cached, ``LoadError/failed(reason:)`` when
    ///   the store fails, and `CancellationError` when the task was cancelled while the store was
    ///   read.
    public func loadImageData(from url: URL) async throws -> Data {
        let data: Data?
        do {
            data = try await store.retrieve(dataForURL: url)
        } catch {
            try Task.checkCancellation()
            throw LoadError.failed(reason: "\(error)")
        }
        try Task.checkCancellation()
        guard let data else { throw LoadError.notFound }
        return data
    }
}

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do): the sentence, not
// "The operation could not be completed."
extension LocalImageDataLoader.SaveError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}

extension LocalImageDataLoader.LoadError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
