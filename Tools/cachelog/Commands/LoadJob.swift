import CacheLog
import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The main job, composed from the use cases by the strategy: remote first (retried on invalid
/// data) with the cache as the fallback, or a fresh cache first with the remote as the fallback;
/// remote items are cached on their way.
struct LoadJob: ContractBody {
    let log: CacheLog
    let key: String
    let url: URL
    let contract: Contract
    let maxAge: MaxAge
    let strategy: CacheStrategy
    let retries: Int
    let now: @Sendable () -> Date
    let client: any HTTPClient
    let logger: Logger

    /// What a load delivered: the items as JSON, where they came from, when they were cached,
    /// and whether they are in the cache now.
    struct Report {
        enum Source: String { case remote, cache }
        let source: Source
        let key: String
        /// When the items were cached (from the cache), or loaded (from the remote).
        let timestamp: Date
        let age: TimeInterval
        /// Each item as JSON text.
        let items: [String]
        /// Why remote items could not be saved; `nil` when they were (or came from the cache).
        let saveError: (any Error)?

        var cached: Bool { saveError == nil }
    }

    func run() async throws -> Report {
        try await contract.visit(self)
    }

    func run<Item: Sendable>(
        _ mapper: @escaping @Sendable (Data, HTTPURLResponse) throws -> [Item], coder: FeedPayloadCoder<Item>,
        contract: Contract, render: @escaping @Sendable (Item) throws -> String
    ) async throws -> Report {
        let local = LocalFeedLoader<Item>(
            store: CacheLogFeedStore(log: log, key: key), currentDate: now, policy: CachePolicy(maxAge: maxAge),
            coder: coder, contract: contract.rawValue, logger: logger)
        let remote = RemoteLoader(url: url, client: client, mapper: mapper, logger: logger)
        let retried = FeedLoaderRetryDecorator(
            decoratee: AnyFeedLoader<Item>.remote { try await remote.load() },
            retries: retries,
            isRetryable: { ($0 as? RemoteLoaderError) == .invalidData })
        let loader = strategy.compose(remote: retried, cache: local, logger: logger)

        let loaded: LoadedFeed<Item>
        do {
            loaded = try await loader.loadFeed()
        } catch let error as NoUsableFeedError {
            let (remoteError, cacheError) = strategy == .remoteFirst
                ? (error.primaryError, error.fallbackError) : (error.fallbackError, error.primaryError)
            throw CLIFailure(
                "no usable data for \(key): \(describeRemote(remoteError)); \(describeCache(cacheError, now: now()))",
                code: Exit.noUsableData)
        }
        let at = now()
        let timestamp = loaded.cacheTimestamp ?? at
        let saveError: (any Error)? = switch (loaded.source, loaded.cacheSave) {
        case (.cache, _), (.remote, .saved): nil
        case (.remote, .failed(let error)): error
        // Every remote feed passes the cache decorator; one that did not was not saved either.
        case (.remote, .notAttempted): CLIFailure("the items were not handed to the cache")
        }
        return Report(
            source: loaded.cacheTimestamp == nil ? .remote : .cache, key: key, timestamp: timestamp,
            age: at.timeIntervalSince(timestamp), items: try loaded.items.map(render), saveError: saveError)
    }
}

extension LoadJob.Report {
    /// `{"source":…,"key":…,"cached":bool,"timestamp":…,"age":seconds,"items":[…]}`
    var json: String {
        "{\"source\":\"\(source.rawValue)\",\"key\":\(JSONText.string(key)),\"cached\":\(cached),\"timestamp\":\(JSONText.date(timestamp)),\"age\":\(JSONText.number(age.rounded())),\"items\":[\(items.joined(separator: ","))]}"
    }

    /// A header line and a line per item, naming it by its title, name or scripture when it has one.
    /// The header says "cached" only for items that are in the cache.
    var text: [String] {
        let count = "\(key): \(items.count) item\(items.count == 1 ? "" : "s")"
        var lines: [String] = switch (source, cached) {
        case (.cache, _): ["\(count) from cache, cached \(DateParsing.string(timestamp)) (age \(DurationText.string(age)))"]
        case (.remote, true): ["\(count) from remote, cached \(DateParsing.string(timestamp)) (age \(DurationText.string(age)))"]
        case (.remote, false): ["\(count) from remote, loaded \(DateParsing.string(timestamp)), not saved to the cache"]
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
