#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// The cache use cases over a ``FeedStore``: save, load, validate.
///
/// Items are cached as the payload their ``FeedPayloadCoder`` writes: for `Codable` items, JSON
/// with sorted keys (so equal feeds give equal payloads). Ages are judged by a ``CachePolicy``
/// against the injected clock (the judging clock, when one is given). Errors from the store are
/// rethrown unchanged.
///
/// Every save records the loader's policy with the cache (``RecordedPolicy``: its max age and
/// the name of its contract), so that a reader who does not know this app can judge the cache
/// alone; a loader made with ``PolicyChoice/recordedPolicy`` is such a reader.
public struct LocalFeedLoader<Item: Sendable>: Sendable {
    private let store: any FeedStore
    private let currentDate: @Sendable () -> Date
    private let judgingDate: @Sendable () -> Date
    private let policy: CachePolicy
    private let coder: FeedPayloadCoder<Item>
    private let contract: ContractName?
    private let policyChoice: PolicyChoice
    private let logger: Logger?

    /// Creates a loader over `store` whose items are cached as `coder` writes them.
    /// - Parameters:
    ///   - store: where the cache lives.
    ///   - currentDate: the clock; timestamps saves, and judges ages unless `judgingDate` is given.
    ///   - judgingDate: the clock that judges ages instead, when given. A use case that stamps
    ///     its saves with the moment it began (a load whose request takes a while) still judges a
    ///     cache it reads later at the moment it reads it: a save another process made meanwhile
    ///     is stamped after the load began, and is fresh, not from a clock set ahead.
    ///   - policy: how old a cache may get; ``CachePolicy/feeds`` (7 days) by default.
    ///   - coder: turns items into the stored payload and back.
    ///   - contract: the name of the payload's contract, recorded with each save; `nil` for none.
    ///   - judging: whose policy judges a cache's age: the loader's (the default) or the one the
    ///     cache was saved under.
    ///   - logger: where to log what the use cases did, if anywhere.
    public init(
        store: any FeedStore,
        currentDate: @escaping @Sendable () -> Date,
        judgingDate: (@Sendable () -> Date)? = nil,
        policy: CachePolicy = .feeds,
        coder: FeedPayloadCoder<Item>,
        contract: ContractName? = nil,
        judging: PolicyChoice = .ownPolicy,
        logger: Logger? = nil
    ) {
        self.store = store
        self.currentDate = currentDate
        self.judgingDate = judgingDate ?? currentDate
        self.policy = policy
        self.coder = coder
        self.contract = contract
        self.policyChoice = judging
        self.logger = logger
    }

    /// Replaces the cache with `items`, timestamped now, in one atomic store operation.
    ///
    /// - Throws: What the coder's `encode` throws (for ``FeedPayloadCoder/json``, an
    ///   `EncodingError`), or the store's error (``NewerCacheError`` from a store that refuses
    ///   an older save); the old cache is then kept.
    public func save(_ items: [Item]) async throws {
        try await save(items, validators: .none)
    }

    /// Replaces the cache with `items` and the remote's `validators`, timestamped now, in one
    /// atomic store operation.
    ///
    /// - Throws: What the coder's `encode` throws (for ``FeedPayloadCoder/json``, an
    ///   `EncodingError`), or the store's error (``NewerCacheError`` from a store that refuses
    ///   an older save); the old cache is then kept.
    public func save(_ items: [Item], validators: CacheValidators) async throws {
        let payload = try encode(items)
        // Stamped once the payload is ready: encoding a large feed takes a while, and a stamp
        // taken before it would make this save look older than one that began later and
        // finished first.
        let timestamp = currentDate()
        try await store.replace(with: payload, timestamp: timestamp, policy: recordedPolicy, validators: validators)
        logger?.debug("Saved feed to cache", metadata: ["items": "\(items.count)", "timestamp": "\(timestamp)"])
    }

    /// The validators to ask the remote with: those of a cached feed that could be shown, fresh or
    /// expired. None when the cache is empty, cannot be retrieved or does not decode, so that the
    /// remote sends the whole feed rather than vouching for a cache that cannot serve.
    public func revalidationValidators() async -> CacheValidators {
        do {
            guard let cache = try await store.retrieve(), !cache.validators.isEmpty else { return .none }
            _ = try coder.decode(cache.feed)
            return cache.validators
        } catch {
            logger?.info("Asking for the whole feed: the cache cannot be revalidated", metadata: ["error": "\(error)"])
            return .none
        }
    }

    /// The remote said the cached feed is still current ("not modified"): saves it again as it is,
    /// timestamped now, under the loader's policy and with `validators`, and delivers its items as
    /// the remote's (``LoadedFeed/revalidated``). An expired cache is fresh again.
    ///
    /// The refresh is one ``FeedStore/insert(_:timestamp:policy:validators:)`` of the stored bytes
    /// (an event log stores an unchanged payload once). A failed insert still delivers the items,
    /// with ``CacheSaveOutcome/failed(_:)``.
    ///
    /// With `askedWith`, the validators the remote was asked with, it refreshes only while the
    /// cache still holds that feed: another process may save a newer one between the question and
    /// the answer, and "not modified" does not vouch for it.
    ///
    /// - Throws: ``NotModifiedError`` when nothing is cached, the cached feed cannot be retrieved
    ///   or decoded, or its validators are no longer `askedWith`; nothing is written then.
    public func refresh(validators: CacheValidators, askedWith: CacheValidators? = nil) async throws -> LoadedFeed<Item> {
        let cache: CachedFeed?
        let items: [Item]
        do {
            cache = try await store.retrieve()
            items = try cache.map { try decode($0.feed) } ?? []
        } catch {
            throw NotModifiedError.unreadableCache(error)
        }
        guard let cache else { throw NotModifiedError.noCache }
        if let askedWith, cache.validators != askedWith { throw NotModifiedError.cacheChanged }
        let timestamp = currentDate()
        return await LoadedFeed.remote(items, revalidated: true, logger: logger) {
            try await store.insert(cache.feed, timestamp: timestamp, policy: recordedPolicy, validators: validators)
            logger?.debug("Refreshed the cached feed: not modified", metadata: ["timestamp": "\(timestamp)"])
        }
    }

    /// What each save records: the loader's policy and contract.
    private var recordedPolicy: RecordedPolicy { RecordedPolicy(maxAge: policy.maxAge, contract: contract) }

    /// Delivers the cached items, or none when the cache is empty or expired.
    ///
    /// Has no side effects: an expired cache is left for ``validateCache()`` to remove.
    ///
    /// - Throws: The store's error when retrieval fails, and ``InvalidCachedFeedError`` when the
    ///   payload cannot be decoded.
    public func load() async throws -> [Item] {
        guard let cache = try await store.retrieve(),
              policy(for: cache).validate(cache.trustedTimestamp, against: judgingDate())
        else { return [] }
        return try decode(cache.feed)
    }

    /// Delivers the cached items whatever their age, with when they were cached and whether they
    /// are still fresh.
    ///
    /// It is what "cache then remote" shows before the remote answers (stale while revalidate).
    /// No side effects.
    ///
    /// - Returns: The items, the cache's timestamp and whether it is fresh under the judging
    ///   policy; `nil` when the cache is empty.
    /// - Throws: The store's error when retrieval fails, and ``InvalidCachedFeedError`` when the
    ///   payload cannot be decoded.
    public func loadIgnoringAge() async throws -> (items: [Item], timestamp: Date, isFresh: Bool)? {
        guard let cache = try await store.retrieve() else { return nil }
        let fresh = policy(for: cache).validate(cache.trustedTimestamp, against: judgingDate())
        return (try decode(cache.feed), cache.timestamp, fresh)
    }

    /// The policy that judges `cache`: see ``PolicyChoice``.
    public func policy(for cache: CachedFeed) -> CachePolicy {
        switch (policyChoice, cache.policy) {
        case (.recordedPolicy, let recorded?): CachePolicy(maxAge: recorded.maxAge)
        case (.recordedPolicy, nil), (.ownPolicy, _): policy
        }
    }

    /// Removes a cache that cannot be read or is too old; leaves a fresh or empty cache alone.
    ///
    /// A retrieval error deletes the cache with ``DeletionReason/retrievalError``, and so does a
    /// payload that no longer decodes with the loader's coder (the cache could never be shown);
    /// an expired cache is expired with its timestamp and the judging policy's maximum age.
    ///
    /// - Throws: The store's error when the deletion or expiry itself fails; a failed retrieval
    ///   or decoding is not thrown, it deletes the cache.
    public func validateCache() async throws {
        let cache: CachedFeed?
        do {
            cache = try await store.retrieve()
        } catch {
            logger?.warning("Deleting cache that cannot be retrieved", metadata: ["error": "\(error)"])
            try await store.deleteCachedFeed(reason: .retrievalError)
            return
        }
        guard let cache else { return }
        let policy = policy(for: cache)
        guard policy.validate(cache.trustedTimestamp, against: judgingDate()) else {
            logger?.info("Expiring cache", metadata: ["timestamp": "\(cache.timestamp)", "maxAge": "\(policy.maxAge)"])
            try await store.expireCachedFeed(timestamp: cache.timestamp, maxAge: policy.maxAge.timeInterval)
            return
        }
        do {
            _ = try coder.decode(cache.feed)
        } catch {
            logger?.warning("Deleting cache whose payload does not decode", metadata: ["error": "\(error)"])
            try await store.deleteCachedFeed(reason: .retrievalError)
        }
    }

    private func encode(_ items: [Item]) throws -> Data {
        try coder.encode(items)
    }

    private func decode(_ feed: Data) throws -> [Item] {
        do {
            return try coder.decode(feed)
        } catch {
            throw InvalidCachedFeedError(underlying: error, contract: contract?.name)
        }
    }
}

extension LocalFeedLoader where Item: Codable {
    /// Creates a loader over `store` whose items are cached as JSON with sorted keys
    /// (``FeedPayloadCoder/json``).
    /// - Parameters:
    ///   - store: where the cache lives.
    ///   - currentDate: the clock; timestamps saves, and judges ages unless `judgingDate` is given.
    ///   - judgingDate: the clock that judges ages instead, when given (see
    ///     ``init(store:currentDate:judgingDate:policy:coder:contract:judging:logger:)``).
    ///   - policy: how old a cache may get; ``CachePolicy/feeds`` (7 days) by default.
    ///   - contract: the name of the payload's contract, recorded with each save; `nil` for none.
    ///   - judging: whose policy judges a cache's age (see ``PolicyChoice``).
    ///   - logger: where to log what the use cases did, if anywhere.
    public init(
        store: any FeedStore,
        currentDate: @escaping @Sendable () -> Date,
        judgingDate: (@Sendable () -> Date)? = nil,
        policy: CachePolicy = .feeds,
        contract: ContractName? = nil,
        judging: PolicyChoice = .ownPolicy,
        logger: Logger? = nil
    ) {
        self.init(
            store: store, currentDate: currentDate, judgingDate: judgingDate, policy: policy, coder: .json, contract: contract,
            judging: judging, logger: logger)
    }
}

extension LocalFeedLoader: FeedLoader {
    /// Delivers the cached items with the cache's timestamp as their source.
    ///
    /// Unlike ``load()``, an empty or expired cache is an error (``CacheUnavailableError``), so
    /// that a fallback can tell "no usable cache" from "a cached empty feed". No side effects.
    ///
    /// - Throws: ``CacheUnavailableError`` when the cache is empty, gone, expired or stamped in
    ///   the future; the store's error when retrieval fails; ``InvalidCachedFeedError`` when the
    ///   payload cannot be decoded.
    public func loadFeed() async throws -> LoadedFeed<Item> {
        guard let cache = try await store.retrieve() else {
            // Why it is empty, when the store keeps the history that says: a failure to find out
            // leaves the plain answer.
            throw (try? await store.ending()).flatMap { $0 }.map(CacheUnavailableError.gone) ?? CacheUnavailableError.empty
        }
        let policy = policy(for: cache)
        let now = judgingDate()
        guard policy.validate(cache.trustedTimestamp, against: now) else {
            if cache.trustedTimestamp > now { throw CacheUnavailableError.stampedInTheFuture(timestamp: cache.trustedTimestamp) }
            throw CacheUnavailableError.expired(timestamp: cache.timestamp, maxAge: policy.maxAge)
        }
        return LoadedFeed(items: try decode(cache.feed), source: .cache(timestamp: cache.timestamp))
    }
}

extension LocalFeedLoader: FeedCaching {}
