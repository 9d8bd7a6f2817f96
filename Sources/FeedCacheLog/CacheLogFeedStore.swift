import CacheLog
import FeedCache
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A `FeedStore` that keeps one cache as one key of an `EventLog`: every write is an event in
/// the log, and the cache is the key's live value in the projection.
///
/// | store operation | appended to the log |
/// |---|---|
/// | `replace(with:timestamp:policy:validators:)` | `delete(replaced)` + `put`, as one atomic batch |
/// | `insert(_:timestamp:policy:validators:)` | `put` |
/// | `deleteCachedFeed(reason:)` | `delete(reason)`, only when a cache exists |
/// | `expireCachedFeed(timestamp:maxAge:)` | `expire(timestamp, maxAge)`, only when a cache exists |
///
/// Deleting or expiring an empty cache appends nothing: the log records what happened to a cache,
/// not requests that changed nothing.
///
/// A store made for one load, with ``since`` (the log's last seq read before the load's request),
/// refuses a save (replace or insert) with `NewerCacheError` when the live cache is newer by the
/// log's own order: its fetch began no earlier than the save's (each such put records its `since`),
/// or, recording none, it landed after the save's fetch began. The log judges inside its write
/// transaction, so the newest cache wins, not the last commit; the timestamps, from clocks that may
/// disagree, only date the caches. A store without ``since`` knows nothing of when a fetch began:
/// its saves land (the last to commit is live) and record no position, so that a later load
/// judges them by when they landed.
///
/// A put records its policy, the max age in the record's max-age field and the contract as the
/// metadata entry `contract`, and the remote's validators as the entries `etag` and
/// `last-modified`, with `url`, the resource they describe (and `validator-charset` when one of
/// them is not ASCII). A refresh (a put of the payload
/// already live) is stored as a reference to the earlier record, not as a second copy.
public struct CacheLogFeedStore: FeedStore {
    /// The log the cache is kept in.
    public let log: EventLog
    /// The log key of this cache.
    public let key: String
    /// The log's last seq when the fetch this store saves began (`EventLog.lastSeq()`, 0 with no
    /// database yet); `nil` when the store does not know it.
    public let since: UInt64?
    /// Where this store's puts come from: a load's fetch, or the app's write.
    public let origin: PutOrigin
    private let metadata: @Sendable () -> [String: String]

    /// Keeps the cache named `key` in `log`.
    /// - Parameters:
    ///   - log: the log to append to and read from; one instance per database, shared.
    ///   - key: the log key of this cache, such as `films` or `search:people:sky`.
    ///   - metadata: more named strings for each put to record beside its policy, asked for at
    ///     the moment of the put: a paged search's cursor is known only once its page arrived.
    ///   - since: for a store made for one load, the log's last seq read before its request: a
    ///     save is then refused when a load that began no earlier has saved meanwhile. `nil` (the
    ///     default): a save lands whatever it replaces, and the last to commit is live.
    ///   - origin: `.written` for a store the app writes through without a fetch: each put
    ///     records so (``originName``), and the audit trail says "written by the app".
    public init(
        log: EventLog, key: String, metadata: @escaping @Sendable () -> [String: String] = { [:] }, since: UInt64? = nil,
        origin: PutOrigin = .fetched
    ) {
        self.log = log
        self.key = key
        self.metadata = metadata
        self.since = since
        self.origin = origin
    }

    /// Appends `delete(reason)` when the key holds a cache; an empty cache appends nothing.
    ///
    /// - Throws: `CacheLogError` when the log cannot be read or the append fails.
    public func deleteCachedFeed(reason: FeedCache.DeletionReason) async throws {
        guard try log.isLive(key) else { return }
        // The log's reasons are a superset: it also records the delete that starts a replace.
        switch reason {
        case .explicit: try await log.append(.delete(key: key, reason: .explicit))
        case .retrievalError: try await log.append(.delete(key: key, reason: .retrievalError))
        }
    }

    /// Appends a `put` of `feed`, with its policy and validators.
    ///
    /// - Throws: `NewerCacheError` when, with ``since``, the live cache is newer by the log's
    ///   order (nothing is appended); `CacheLogError` when the append fails.
    public func insert(_ feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) async throws {
        try await append([put(feed, timestamp: timestamp, policy: policy, validators: validators)])
    }

    /// Appends `delete(replaced)` and a `put` of `feed` as one atomic batch.
    ///
    /// - Throws: `NewerCacheError` when, with ``since``, the live cache is newer by the log's
    ///   order (nothing is appended); `CacheLogError` when the append fails.
    public func replace(with feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) async throws {
        try await append(
            [.delete(key: key, reason: .replaced), put(feed, timestamp: timestamp, policy: policy, validators: validators)])
    }

    /// Appends a save of this key, unless the key's live cache is newer by the log's order (with
    /// ``since``): the log judges inside its write transaction, so a save whose fetch began earlier
    /// and committed later (another process's, or another task's) never replaces the newer cache.
    ///
    /// - Throws: `NewerCacheError` when the save was refused, and what the log throws.
    private func append(_ events: [Event]) async throws {
        guard let since else {
            try await log.append(events)
            return
        }
        if let refused = NewerCacheError(try await log.append(events, unlessSupersededSince: since, liveAt: key), loadBegan: since) {
            throw refused
        }
    }

    private func put(_ feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) -> Event {
        Self.put(key: key, feed: feed, timestamp: timestamp, policy: policy, validators: validators, metadata: metadata(), origin: origin)
    }

    /// The put that saves `feed` for `key` as this store records it: the policy's max age and
    /// contract, the validators, and `metadata` (whose names the store writes itself are
    /// dropped). For an app that appends a save with other events in one batch, as a search
    /// saves its objects with its list. A put the app wrote records its `origin` (``originName``).
    public static func put(
        key: String, feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators = .none,
        metadata: [String: String] = [:], origin: PutOrigin = .fetched
    ) -> Event {
        // The names this store writes itself are not the caller's to set: above all the mark of
        // the package's own contracts, which would let an app's payload be judged (and deleted)
        // under a contract it never followed.
        var metadata = metadata.filter { !reservedNames.contains($0.key) }
        metadata[Self.contractName] = policy?.contract?.name
        if policy?.contract?.isBuiltIn == true { metadata[Self.builtInMarkName] = Self.builtInMark }
        if origin == .written { metadata[Self.originName] = PutOrigin.written.rawValue }
        // Validators are worth keeping only whole and only when small: a server's 70 KB ETag
        // would break the record's metadata limit and fail every save. Without all of them the
        // next load asks for the whole feed, as a server that sends none is asked. The URL is
        // kept only beside a validator it qualifies.
        let kept = !validators.isEmpty
            && [validators.etag, validators.lastModified, validators.resource].allSatisfy { ($0?.utf8.count ?? 0) <= Self.validatorLimit }
        if kept {
            metadata[Self.etagName] = validators.etag
            metadata[Self.lastModifiedName] = validators.lastModified
            metadata[Self.resourceName] = validators.resource
            // Only a value that is not ASCII reads differently as ISO-8859-1 and as UTF-8.
            if [validators.etag, validators.lastModified].contains(where: { $0?.unicodeScalars.contains { !$0.isASCII } == true }) {
                metadata[Self.validatorCharsetName] = Self.validatorCharset
            }
        }
        return .put(key: key, payload: feed, timestamp: timestamp, maxAge: policy?.maxAge.timeInterval, metadata: metadata)
    }

    /// The longest validator (ETag, Last-Modified or URL) kept, in UTF-8 bytes.
    static let validatorLimit = 8_192

    /// The metadata name under which a put records its contract.
    public static let contractName = "contract"
    /// The metadata name under which a put of one of this package's own contracts records so
    /// (`ContractName/isBuiltIn`), with the value `cachelog`.
    public static let builtInMarkName = "contract-by"
    static let builtInMark = "cachelog"
    /// The metadata names this store (or the log, `Event.sinceName`) writes itself.
    static let reservedNames: Set<String> = [
        contractName, builtInMarkName, etagName, lastModifiedName, resourceName, validatorCharsetName, originName, Event.sinceName,
    ]
    /// The metadata name under which a put the app wrote without a fetch records so, with the
    /// value `written` (``PutOrigin``); a fetched put records no origin.
    public static let originName = "origin"
    /// The metadata name under which a put records the remote's entity tag (HTTP `ETag`), verbatim.
    public static let etagName = "etag"
    /// The metadata name under which a put records the remote's `Last-Modified`, verbatim.
    public static let lastModifiedName = "last-modified"
    /// The metadata name under which a put records what its validators describe (the URL).
    public static let resourceName = "url"
    /// The metadata name under which a put whose ETag or Last-Modified is not ASCII records that
    /// they are the header's bytes read as ISO-8859-1 (each byte one character), with the value
    /// `iso-8859-1`. A put without it was written when header bytes were read as UTF-8.
    public static let validatorCharsetName = "validator-charset"
    static let validatorCharset = "iso-8859-1"

    /// The validators a put recorded, as its stored value's metadata carries them: as the HTTP
    /// client reads headers now, byte for byte as ISO-8859-1. A put written before that kept the
    /// header's bytes read as UTF-8; its UTF-8 bytes, read as ISO-8859-1, are the bytes it was
    /// sent as (and sent back as) then.
    private static func validators(metadata: [String: String]) -> CacheValidators {
        let latin1 = metadata[validatorCharsetName] == validatorCharset
        let value = { (name: String) in metadata[name].map { latin1 ? $0 : Self.readingUTF8AsLatin1($0) } }
        return CacheValidators(etag: value(etagName), lastModified: value(lastModifiedName), resource: metadata[resourceName])
    }

    /// `text`'s UTF-8 bytes, each read as the ISO-8859-1 character of that number; ASCII stays as it is.
    static func readingUTF8AsLatin1(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { !$0.isASCII }) else { return text }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.utf8.map { Unicode.Scalar($0) })
        return String(scalars)
    }

    /// The policy a put recorded, as its live entry or stored value carries it: `nil` without a
    /// recorded max age, or with one that is not a whole number of seconds (a damaged record).
    public static func recordedPolicy(maxAge: TimeInterval?, metadata: [String: String]) -> RecordedPolicy? {
        guard let maxAge, let age = MaxAge(seconds: maxAge) else { return nil }
        return RecordedPolicy(maxAge: age, contract: contract(metadata: metadata))
    }

    /// The contract a put recorded: the package's own when the put carries its mark, else an
    /// app's (every put written before the mark existed reads as an app's, judged by age alone).
    public static func contract(metadata: [String: String]) -> ContractName? {
        guard let name = metadata[contractName] else { return nil }
        return metadata[builtInMarkName] == builtInMark ? ContractName(builtIn: name) : ContractName(name)
    }

    /// Appends `expire(timestamp, maxAge)` when the key holds a cache; an empty cache appends
    /// nothing.
    ///
    /// - Throws: `CacheLogError` when the log cannot be read or the append fails.
    public func expireCachedFeed(timestamp: Date, maxAge: TimeInterval) async throws {
        guard try log.isLive(key) else { return }
        try await log.append(.expire(key: key, timestamp: timestamp, maxAge: maxAge))
    }

    /// The key's live cache, with the policy and validators its put recorded; `nil` when none.
    ///
    /// - Throws: `CacheLogError` when the log cannot be read, or the put's record fails its
    ///   checks.
    public func retrieve() async throws -> CachedFeed? {
        try log.retrieve(key).map(Self.cachedFeed)
    }

    /// How the key's last cache ended (`EventLog.ending(of:)`): evicted, removed, expired by
    /// validation, deleted as unreadable; nil while it is live, and for a save that replaced it.
    ///
    /// - Throws: `CacheLogError` when the log cannot be read.
    public func ending() async throws -> CacheEnding? {
        guard let ending = try log.ending(of: key) else { return nil }
        let at = ending.recordedAt
        switch ending.cause {
        case .deleted(.evicted): return .evicted(at: at, sizeLimit: ending.sizeLimit)
        case .deleted(.explicit): return .removed(at: at)
        case .deleted(.retrievalError): return .unreadable(at: at)
        case .deleted(.replaced): return nil
        case .expired(let timestamp, let maxAge): return .expired(at: at, timestamp: timestamp, maxAge: maxAge)
        }
    }

    /// The cache a stored value is, as ``retrieve()`` gives it: its payload, timestamp, the
    /// policy and validators its put recorded.
    public static func cachedFeed(_ value: StoredValue) -> CachedFeed {
        CachedFeed(
            feed: value.payload, timestamp: value.timestamp, policy: recordedPolicy(maxAge: value.maxAge, metadata: value.metadata),
            validators: validators(metadata: value.metadata), recordedAt: value.recordedAt)
    }
}
