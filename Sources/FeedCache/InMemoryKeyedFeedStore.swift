import Foundation

/// A ``KeyedFeedStore`` of ``InMemoryFeedStore``s, created on first use, for tests and previews.
public final class InMemoryKeyedFeedStore: KeyedFeedStore, @unchecked Sendable {
    // `lock` guards `stores`; nothing else is mutable.
    private let lock = NSLock()
    private var stores: [String: InMemoryFeedStore] = [:]

    /// Creates an empty keyed store.
    public init() {}

    public func store(for key: String) -> any FeedStore {
        inMemoryStore(for: key)
    }

    /// The in-memory store for `key`, to inspect its ``InMemoryFeedStore/operations``.
    public func inMemoryStore(for key: String) -> InMemoryFeedStore {
        lock.withLock {
            if let store = stores[key] { return store }
            let store = InMemoryFeedStore()
            stores[key] = store
            return store
        }
    }

    /// The keys asked for so far, sorted.
    public var keys: [String] {
        lock.withLock { stores.keys.sorted() }
    }
}
