#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One past search, read from its last save: the search history of the people and verse apps.
public struct PastSearch: Sendable, Equatable {
    /// The query, as typed.
    public let query: String
    /// The name of the contract it was searched under.
    public let contract: String
    /// Its cache key.
    public let key: String
    /// When its results were last cached (as old as their oldest page); `nil` for a damaged record.
    public let timestamp: Date?
    /// How many items its results hold.
    public let items: Int
    /// Whether its results are still the live cache and fresh under the policy they were saved under.
    public let fresh: Bool
    /// Whether the server has another page (``SearchResource/loadMore()``).
    public let more: Bool
    /// The seq of its last save: searches are listed newest first.
    public let seq: UInt64
}

extension PastSearch: Encodable {
    private enum CodingKeys: String, CodingKey { case query, contract, key, timestamp, items, fresh, more }

    /// `{"query", "contract", "key", "timestamp", "items", "fresh", "more"}`, the timestamp `null`
    /// for a damaged record.
    ///
    /// - Throws: What `encoder` throws (an `EncodingError` for a value it cannot encode).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(query, forKey: .query)
        try container.encode(contract, forKey: .contract)
        try container.encode(key, forKey: .key)
        try container.encodeOrNull(timestamp, forKey: .timestamp)
        try container.encode(items, forKey: .items)
        try container.encode(fresh, forKey: .fresh)
        try container.encode(more, forKey: .more)
    }
}

extension PastSearch {
    /// Every search the log has saved, as ``CacheClient/searches(contract:limit:)`` lists them,
    /// judged fresh or not at `now`.
    static func all(in log: EventLog, contract: String?, limit: Int?, now: Date) throws -> [PastSearch] {
        // The package's contracts' searches, and an app's (`CacheKey.search`).
        let prefixes = contract.map { ["search:" + $0 + ":", "search:" + CacheKey.appPrefix + $0 + ":"] } ?? ["search:"]
        // The last put of each search key, in log order; keyed by bytes, as the log keys.
        var last: [[UInt8]: RecordedEvent] = [:]
        try log.forEachEvent(EventQuery(kinds: [.put], includePayload: true)) { item in
            if case .event(let event) = item, prefixes.contains(where: event.key.hasPrefix) { last[Array(event.key.utf8)] = event }
            return true
        }
        let live = Dictionary(try log.state().entries.map { (Array($0.key.utf8), $0.seq) }, uniquingKeysWith: { first, _ in first })
        var searches = last.values.map { put -> PastSearch in
            let parts = put.key.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            let policy = RecordedPolicy(of: put) ?? RecordedPolicy.unrecorded
            let fresh = live[Array(put.key.utf8)] == put.seq
                && put.timestamp.map { CachePolicy(maxAge: policy.maxAge).validate($0, recordedAt: put.recordedAt, against: now) } == true
            return PastSearch(
                query: put.metadata[SearchRecord.queryName] ?? (parts.count == 3 ? String(parts[2]) : put.key),
                contract: put.metadata[CacheLogFeedStore.contractName] ?? (parts.count == 3 ? String(parts[1]) : ""),
                key: put.key, timestamp: put.timestamp, items: put.payload.map(Self.itemCount) ?? 0, fresh: fresh,
                more: put.metadata[SearchRecord.nextName] != nil, seq: put.seq)
        }
        searches.sort { $0.seq > $1.seq }
        if let limit { searches = Array(searches.prefix(max(0, limit))) }
        return searches
    }

    /// The items of a cached search: its payload is a JSON array (one item when it is not).
    private static func itemCount(_ payload: Data) -> Int {
        JSONScanner.scan(Array(payload)).map { $0.elements?.count ?? 1 } ?? 1
    }
}
