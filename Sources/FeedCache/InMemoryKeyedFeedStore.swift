import Foundation

/// A ``KeyedFeedStore`` of ``InMemoryFeedStore``s, created on first use, for tests and previews.
///
/// Keys are compared byte for byte (as UTF-8), as ``KeyedFeedStore`` requires.
public final class InMemoryKeyedFeedStore: KeyedFeedStore, @unchecked Sendable {
    // `lock` guards `stores`; nothing else is mutable. Keyed by the key's UTF-8 bytes, as a log
    // keys them: Swift's String equality would give NFC and NFD "café" one store.
    private let lock = NSLock()
    private var stores: [[UInt8]: (key: String, store: InMemoryFeedStore)] = [:]

    /// Creates an empty keyed store.
    public init() {}

    public func store(for key: String) -> any FeedStore {
        inMemoryStore(for: key)
    }

    /// The in-memory store for `key`, to inspect its ``InMemoryFeedStore/operations``.
    public func inMemoryStore(for key: String) -> InMemoryFeedStore {
        lock.withLock {
            let bytes = Array(key.utf8)
            if let existing = stores[bytes] { return existing.store }
            let store = InMemoryFeedStore()
            stores[bytes] = (key, store)
            return store
        }
    }

    /// The keys asked for so far, sorted by their UTF-8 bytes.
    public var keys: [String] {
        lock.withLock {
            stores.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.value.key)
        }
    }
}
