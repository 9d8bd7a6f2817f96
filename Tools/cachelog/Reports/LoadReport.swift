import CacheLogKit
import CacheLogReports
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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

    /// For a search with an object cache: the object keys that could not be cached.
    var skippedObjects: [String] = []
    /// A line for stderr although the items were delivered (``ServedDespite``); nil: none.
    var warning: String?

    var cached: Bool { saveError == nil }

    /// What `loaded` delivered, its age counted at `now`, each item rendered by `render`.
    init<Item>(_ loaded: CacheLoad<Item>, at now: Date, render: (Item) throws -> String) throws {
        source = loaded.source == .remote ? .remote : .cache
        key = loaded.key
        timestamp = loaded.timestamp
        age = now.timeIntervalSince(loaded.timestamp)
        items = try loaded.items.map(render)
        saveError = switch (loaded.source, loaded.cacheSave) {
        case (.cache, _), (.remote, .saved): nil
        case (.remote, .failed(let error)): error
        case (.remote, .superseded(let newer)): newer
        // Every remote feed passes the cache decorator; one that did not was not saved either.
        case (.remote, .notAttempted): CLIFailure("the items were not handed to the cache")
        }
        more = loaded.more
        revalidated = loaded.revalidated
        skippedObjects = loaded.skippedObjects
        warning = ServedDespite.warning(key: loaded.key, source: loaded.source, remoteFailure: loaded.remoteFailure)
    }

    /// An item as compact JSON: a ``JSONValue`` exactly as the server sent it, anything else
    /// encoded with sorted keys.
    static func json<Item>(_ item: Item) throws -> String {
        if let value = item as? JSONValue { return String(decoding: value.text, as: UTF8.self) }
        guard let encodable = item as? any Encodable else { return "null" }
        return try JSONOutput(keyOrder: .sorted).string(encodable)
    }

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
        let count = "\(EventPrinter.escaped(key)): \(counted(items.count, "item"))"
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
            if let label = (try? JSONDecoder().decode(ItemLabel.self, from: Data(item.utf8)))?.text {
                lines.append("  \(EventPrinter.escaped(label))")
            } else {
                lines.append("  " + item)
            }
        }
        return lines
    }
}

/// What a person knows an item by: the first of its fields `title`, `name`, `scripture` and
/// `description` that is a string; `nil` when it has none or is no JSON object.
private struct ItemLabel: Decodable {
    struct Field: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    let text: String?

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: Field.self)
        text = ["title", "name", "scripture", "description"].lazy
            .compactMap { try? fields.decodeIfPresent(String.self, forKey: Field(stringValue: $0)) }.first
    }
}
