#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The remote loaders are loaders: each composes with the caches and composites like any other.

/// The remote image loader is an image data loader, to compose with the image caches.
extension RemoteImageDataLoader: ImageDataLoader {}

/// A remote feed as a `FeedLoader`: the items a `RemoteLoader` maps, delivered as the
/// remote's, so that they compose with `FeedLoaderCacheDecorator`,
/// `FeedLoaderWithFallbackComposite` and `FeedLoaderRetryDecorator`.
public struct RemoteFeedLoader<Item: Sendable>: FeedLoader {
    private let remote: RemoteLoader<[Item]>

    /// Loads through `remote`.
    public init(_ remote: RemoteLoader<[Item]>) {
        self.remote = remote
    }

    /// Loads `url` with `client`, mapping the response with `contract`.
    public init(url: URL, client: any HTTPClient, contract: FeedContract<Item>) {
        remote = RemoteLoader(url: url, client: client, mapper: contract.map)
    }

    /// The remote's items, with `FeedSource/remote` as their source.
    ///
    /// - Throws: `RemoteLoaderError` (`RemoteLoader.load()`), or `CancellationError` when the
    ///   task is cancelled before the items are delivered.
    public func loadFeed() async throws -> LoadedFeed<Item> {
        LoadedFeed(items: try await remote.load(), source: .remote)
    }
}
