#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `CacheLogFeedStore` of one key of the client's log, for a log that may not exist yet:
/// reads and removals find an empty cache, and the first save creates the database.
struct ClientFeedStore: FeedStore {
    let opener: LogOpener
    let key: String
    /// More named strings for a put to record (a search's query, cursor and pages).
    var metadata: @Sendable () -> [String: String] = { [:] }
    /// How far the log had got when the load's request began: what its saves are judged by; read
    /// at the save when it was not marked. `nil` for an app's write, which no newer cache refuses:
    /// it replaces whatever is cached, and of two writes the last to commit is live.
    var began: FetchStart? = FetchStart()
    /// The load's use of the client's memory tier: a read leaves out the payload whose items it
    /// holds. `nil` reads every payload.
    var held: (any HeldPayload)?

    private func store(_ log: EventLog) -> CacheLogFeedStore {
        CacheLogFeedStore(
            log: log, key: key, metadata: metadata, since: began.flatMap { $0.since ?? (try? log.lastSeq()) },
            origin: began == nil ? .written : .fetched)
    }

    func deleteCachedFeed(reason: DeletionReason) async throws {
        guard let log = try opener.existingForWriting() else { return }
        try await store(log).deleteCachedFeed(reason: reason)
    }

    func insert(_ feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) async throws {
        let feed = try restored(feed)
        try await store(opener.writable(for: [key])).insert(feed, timestamp: timestamp, policy: policy, validators: validators)
    }

    /// The bytes of `feed`: a "not modified" answer saves the cached feed again as it read it,
    /// and a read that left the payload out (the memory tier held its items) gave it no bytes.
    /// They are read now, and must be the same payload; saving the empty stand-in would replace
    /// the feed with nothing.
    private func restored(_ feed: Data) throws -> Data {
        guard feed.isEmpty, let omitted = held?.omittedPayload() else { return feed }
        guard let value = try opener.existing()?.retrieve(key), value.payloadSeq == omitted else { throw NotModifiedError.cacheChanged }
        return value.payload
    }

    func replace(with feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) async throws {
        try await store(opener.writable(for: [key])).replace(with: feed, timestamp: timestamp, policy: policy, validators: validators)
    }

    func expireCachedFeed(timestamp: Date, maxAge: TimeInterval) async throws {
        guard let log = try opener.existingForWriting() else { return }
        try await store(log).expireCachedFeed(timestamp: timestamp, maxAge: maxAge)
    }

    func retrieve() async throws -> CachedFeed? {
        guard let log = try opener.existing() else { return nil }
        guard let held else { return try await store(log).retrieve() }
        guard let value = try log.retrieve(key, unlessPayloadIs: held.heldPayload()) else { return nil }
        held.read(payloadSeq: value.payloadSeq, omitted: value.isPayloadOmitted)
        return CacheLogFeedStore.cachedFeed(value)
    }

    func ending() async throws -> CacheEnding? {
        guard let log = try opener.existing() else { return nil }
        return try await store(log).ending()
    }
}
