import FeedCache
import FeedCacheLog
import Foundation

/// What a load delivered: the items as JSON, where they came from, when they were cached, and
/// whether they are in the cache now. `load --format json` prints
/// `{"source", "key", "cached", "revalidated", "timestamp", "age", "more" (searches only), "items"}`.
struct LoadReport: Encodable {
    enum Source: String, Encodable { case remote, cache }
    let source: Source
    let key: String
    /// When the items were cached (from the cache), or loaded (from the remote).
    let timestamp: Date
    let age: TimeInterval
    /// Each item as JSON text.
    let items: [String]
    /// Why remote items could not be saved; `nil` when they were (or came from the cache).
    let saveError: (any Error)?
    /// For a search: whether the server has another page (`load --more`); `nil` otherwise.
    var more: Bool?
    /// True when the remote answered "not modified" and the items are the cache it vouched for.
    var revalidated = false

    var cached: Bool { saveError == nil }

    private enum CodingKeys: String, CodingKey { case source, key, cached, revalidated, timestamp, age, more, items }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(source, forKey: .source)
        try container.encode(key, forKey: .key)
        try container.encode(cached, forKey: .cached)
        try container.encode(revalidated, forKey: .revalidated)
        try container.encode(timestamp, forKey: .timestamp)
        try container.encode(age.rounded(), forKey: .age)
        try container.encodeIfPresent(more, forKey: .more)
        try container.encode(items.map(RawJSON.init), forKey: .items)
    }

    /// A header line and a line per item, naming it by its title, name or scripture when it has one.
    /// The header says "cached" only for items that are in the cache.
    var text: [String] {
        let count = "\(key): \(counted(items.count, "item"))"
        let remote = revalidated ? "remote (not modified)" : "remote"
        var lines: [String] = switch (source, cached) {
        case (.cache, _): ["\(count) from cache, cached \(DateParsing.string(timestamp)) (age \(DurationText.string(age)))"]
        case (.remote, true): ["\(count) from \(remote), cached \(DateParsing.string(timestamp)) (age \(DurationText.string(age)))"]
        case (.remote, false): ["\(count) from \(remote), loaded \(DateParsing.string(timestamp)), not saved to the cache"]
        }
        switch more {
        case true?: lines[0] += "; more results: add --more"
        case false?: lines[0] += "; no more results"
        case nil: break
        }
        for item in items {
            if let fields = (try? JSONSerialization.jsonObject(with: Data(item.utf8), options: [.fragmentsAllowed])) as? [String: Any],
               let label = ["title", "name", "scripture", "description"].lazy.compactMap({ fields[$0] as? String }).first {
                lines.append("  \(label)")
            } else {
                lines.append("  " + item)
            }
        }
        return lines
    }
}
