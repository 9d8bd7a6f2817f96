/// A ``FeedLoader`` made from a closure: the seam for loaders defined elsewhere (a remote loader).
public struct AnyFeedLoader<Item: Sendable>: FeedLoader {
    private let load: @Sendable () async throws -> LoadedFeed<Item>

    /// Wraps a closure that delivers a loaded feed.
    public init(_ load: @escaping @Sendable () async throws -> LoadedFeed<Item>) {
        self.load = load
    }

    /// Wraps a closure that loads items from the remote end; they are reported as
    /// ``FeedSource/remote``.
    public static func remote(_ load: @escaping @Sendable () async throws -> [Item]) -> Self {
        Self { LoadedFeed(items: try await load(), source: .remote) }
    }

    /// Delivers what the wrapped closure delivers.
    ///
    /// - Throws: What the closure throws, unchanged.
    public func loadFeed() async throws -> LoadedFeed<Item> {
        try await load()
    }
}
