#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking

/// A ``KeyedFeedStore`` of ``InMemoryFeedStore``s, created on first use, for tests and previews.
///
/// Keys are compared byte for byte (as UTF-8), as ``KeyedFeedStore`` requires.
public final class InMemoryKeyedFeedStore: KeyedFeedStore, @unchecked Sendable {
    // The only mutable state. Keyed by the key's UTF-8 bytes, as a log keys them: Swift's String
    // equality would give NFC and NFD "café" one store.
    private let stores = Locked<[[UInt8]: (key: String, store: InMemoryFeedStore)]>([:])

    /// Creates an empty keyed store.
    public init() {}

    public func store(for key: String) -> any FeedStore {
        inMemoryStore(for: key)
    }

    /// The in-memory store for `key`, to inspect its ``InMemoryFeedStore/operations``.
    public func inMemoryStore(for key: String) -> InMemoryFeedStore {
        stores.withLock { stores in
            let bytes = Array(key.utf8)
            if let existing = stores[bytes] { return existing.store }
            let store = InMemoryFeedStore()
            stores[bytes] = (key, store)
            return store
        }
    }

    /// The keys asked for so far, sorted by their UTF-8 bytes.
    public var keys: [String] {
        stores.withLock { stores in
            stores.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.value.key)
        }
    }
}
