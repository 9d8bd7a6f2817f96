#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// The cache use cases for search results: each query has its own cache.
///
/// The cache for a query lives under the key ``key(for:)`` — `keyPrefix` followed by the query,
/// exactly as given (no trimming or case folding) — in a ``KeyedFeedStore``. Results expire
/// after 30 days by default (``CachePolicy/search``).
public struct LocalSearchLoader<Item: Codable & Sendable>: Sendable {
    private let store: any KeyedFeedStore
    private let currentDate: @Sendable () -> Date
    private let policy: CachePolicy
    private let keyPrefix: String
    private let logger: Logger?

    /// Creates a search cache over `store`.
    /// - Parameters:
    ///   - store: where each query's cache lives, one key per query.
    ///   - currentDate: the clock; saves are stamped with it and ages measured against it.
    ///   - policy: the maximum age of a query's results; ``CachePolicy/search`` (30 days) by default.
    ///   - keyPrefix: prepended to each query to form its key; `search:` by default. Give two
    ///     kinds of search sharing one store different prefixes (`search:people:`).
    ///   - logger: where the loaders log what they do; nothing is logged when nil.
    public init(
        store: any KeyedFeedStore,
        currentDate: @escaping @Sendable () -> Date,
        policy: CachePolicy = .search,
        keyPrefix: String = "search:",
        logger: Logger? = nil
    ) {
        self.store = store
        self.currentDate = currentDate
        self.policy = policy
        self.keyPrefix = keyPrefix
        self.logger = logger
    }

    /// The store key of `query`'s cache.
    public func key(for query: String) -> String {
        keyPrefix + query
    }

    /// The ``LocalFeedLoader`` for `query`'s cache, to compose like any feed cache.
    public func loader(for query: String) -> LocalFeedLoader<Item> {
        LocalFeedLoader(
            store: store.store(for: key(for: query)),
            currentDate: currentDate,
            policy: policy,
            logger: logger.map { logger in
                var logger = logger
                logger[metadataKey: "query"] = "\(query)"
                return logger
            }
        )
    }

    /// Replaces `query`'s cached results with `items`. See ``LocalFeedLoader/save(_:)``.
    public func save(_ items: [Item], for query: String) async throws {
        try await loader(for: query).save(items)
    }

    /// Delivers `query`'s cached results, or none. See ``LocalFeedLoader/load()``.
    public func load(for query: String) async throws -> [Item] {
        try await loader(for: query).load()
    }

    /// Removes `query`'s cache if it is unreadable or expired. See ``LocalFeedLoader/validateCache()``.
    public func validateCache(for query: String) async throws {
        try await loader(for: query).validateCache()
    }
}
