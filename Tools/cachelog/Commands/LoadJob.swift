import CacheLog
import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The main job, composed from the use cases: remote first (retried on invalid data), the result
/// cached on success; on failure the cache, if younger than the max age.
struct LoadJob {
    let log: CacheLog
    let key: String
    let url: URL
    let contract: Contract
    let maxAge: MaxAge
    let retries: Int
    let now: @Sendable () -> Date
    let client: any HTTPClient
    let logger: Logger

    /// What a load delivered: the items as JSON, where they came from and when they were cached.
    struct Report {
        enum Source: String { case remote, cache }
        let source: Source
        let key: String
        let timestamp: Date
        let age: TimeInterval
        /// The items, encoded as a JSON array.
        let items: Data
        let count: Int
    }

    func run() async throws -> Report {
        switch contract {
        case .images: return try await run(FeedImagesMapper.map)
        case .films: return try await run(FilmsMapper.map)
        case .genres: return try await run(GenresMapper.map)
        case .verses: return try await run(VersesMapper.map)
        case .people: return try await run { data, response in try PeoplePageMapper.map(data, from: response).results }
        case .json: return try await run(JSONItemsMapper.map)
        }
    }

    private func run<Item: Codable & Sendable>(_ mapper: @escaping @Sendable (Data, HTTPURLResponse) throws -> [Item]) async throws -> Report {
        let local = LocalFeedLoader<Item>(
            store: CacheLogFeedStore(log: log, key: key), currentDate: now, policy: CachePolicy(maxAge: maxAge), logger: logger)
        let remote = RemoteLoader(url: url, client: client, mapper: mapper, logger: logger)
        let retried = FeedLoaderRetryDecorator(
            decoratee: AnyFeedLoader<Item>.remote { try await remote.load() },
            retries: retries,
            isRetryable: { ($0 as? RemoteLoaderError) == .invalidData })
        let loader = FeedLoaderWithFallbackComposite(
            primary: FeedLoaderCacheDecorator(decoratee: retried, cache: local, logger: logger),
            fallback: local)

        let loaded: LoadedFeed<Item>
        do {
            loaded = try await loader.loadFeed()
        } catch let error as NoUsableFeedError {
            throw CLIFailure(
                "no usable data for \(key): \(describeRemote(error.primaryError)); \(describeCache(error.fallbackError, now: now()))",
                code: Exit.noUsableData)
        }
        let at = now()
        let timestamp = loaded.cacheTimestamp ?? at
        let items = try JSONText.encoder().encode(loaded.items)
        return Report(
            source: loaded.cacheTimestamp == nil ? .remote : .cache, key: key, timestamp: timestamp,
            age: at.timeIntervalSince(timestamp), items: items, count: loaded.items.count)
    }
}

extension LoadJob.Report {
    /// `{"source":…,"key":…,"timestamp":…,"age":seconds,"items":[…]}`
    var json: String {
        "{\"source\":\"\(source.rawValue)\",\"key\":\(JSONText.string(key)),\"timestamp\":\"\(DateParsing.string(timestamp))\",\"age\":\(JSONText.number(age.rounded())),\"items\":\(String(decoding: items, as: UTF8.self))}"
    }

    /// A header line and a line per item, naming it by its title, name or scripture when it has one.
    var text: [String] {
        let origin = source == .remote ? "from remote" : "from cache"
        var lines = ["\(key): \(count) item\(count == 1 ? "" : "s") \(origin), cached \(DateParsing.string(timestamp)) (age \(DurationText.string(age)))"]
        let objects = (try? JSONSerialization.jsonObject(with: items)) as? [Any] ?? []
        for object in objects {
            if let fields = object as? [String: Any],
               let label = ["title", "name", "scripture", "description"].lazy.compactMap({ fields[$0] as? String }).first {
                lines.append("  \(label)")
            } else if let data = try? JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed, .sortedKeys]) {
                lines.append("  " + String(decoding: data, as: UTF8.self))
            }
        }
        return lines
    }
}
