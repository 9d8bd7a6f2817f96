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
    /// at the save when it was not marked.
    var began = FetchStart()

    private func store(_ log: EventLog) -> CacheLogFeedStore {
        CacheLogFeedStore(log: log, key: key, metadata: metadata, since: began.since ?? (try? log.lastSeq()))
    }

    func deleteCachedFeed(reason: DeletionReason) async throws {
        guard let log = try opener.existingForWriting() else { return }
        try await store(log).deleteCachedFeed(reason: reason)
    }

    func insert(_ feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) async throws {
        try await store(opener.writable(for: [key])).insert(feed, timestamp: timestamp, policy: policy, validators: validators)
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
        return try await store(log).retrieve()
    }
}
