import BenchSupport
import CacheLog
import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation

/// One store's save + load of the 100-film feed in a loop, alone in its process, to profile:
///
///     bench-compare save-load-probe STORE COUNT [synced|unsynced] [LEVEL] [load]
///     perf record -g bench-compare save-load-probe cachelog 2000 synced
///
/// STORE is `cachelog`, `json` (JSON file; fsynced when synced) or `sqlite` (WAL, FULL). Prints
/// the median milliseconds of one save + load over rounds of 50; with `load`, the store saves
/// once and the rounds only load.
enum SaveLoadProbe {
    static func run(_ arguments: [String]) async throws {
        guard let store = arguments.first, let count = arguments.dropFirst().first.flatMap({ Int($0) }) else {
            throw BenchError("usage: bench-compare save-load-probe cachelog|json|sqlite COUNT [synced|unsynced] [LEVEL] [load]")
        }
        let synced = arguments.dropFirst(2).first != "unsynced"
        let level = arguments.dropFirst(3).first.flatMap { Int($0) }
        let loadOnly = arguments.dropFirst(4).first == "load"
        let work = NSTemporaryDirectory() + "cachelog-probe-\(getpid())"
        try? FileManager.default.removeItem(atPath: work)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let feeds = Feeds.cycle(count: 100)
        var options = EventLog.Options(durability: synced ? .synced : .unsynced, automaticRetention: false)
        if let level { options.compressionLevel = level }
        let log = store == "cachelog" ? try EventLog(path: work + "/cachelog", options: options) : nil
        let loader = log.map { LocalFeedLoader<Film>(store: CacheLogFeedStore(log: $0, key: "films"), currentDate: { Date() }) }
        let json = try JSONFileStore(directory: work + "/json", durable: synced)
        let sqlite = store == "sqlite" ? try SQLiteStore(path: work + "/sqlite") : nil
        func save(_ films: [Film]) async throws {
            if let loader {
                try await loader.save(films)
            } else if let sqlite {
                try sqlite.save(films, key: "films", timestamp: Date())
            } else {
                try json.save(films, timestamp: Date())
            }
        }
        func load() async throws -> Int {
            if let loader { return try await loader.load().count }
            if let sqlite { return try sqlite.loadFilms("films").count }
            return try json.load().films.count
        }
        func saveAndLoad(_ films: [Film]) async throws -> Int {
            if !loadOnly { try await save(films) }
            return try await load()
        }
        if loadOnly { try await save(feeds[0]) }
        var samples = Samples()
        let round = 50
        for start in stride(from: 0, to: count, by: round) {
            let t0 = now()
            for index in start..<min(count, start + round) {
                guard try await saveAndLoad(feeds[index % feeds.count]) == 100 else { throw BenchError("loaded the wrong feed") }
            }
            samples.add(now() - t0, ops: min(round, count - start))
        }
        print(String(format: "%@ %@: %.3f ms per %@ (median of %d rounds)", store, synced ? "synced" : "unsynced", samples.median * 1e3,
                     loadOnly ? "load" : "save + load", samples.values.count))
    }
}
