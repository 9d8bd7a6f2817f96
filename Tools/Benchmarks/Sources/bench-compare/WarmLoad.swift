import BenchSupport
import CacheLogKit
import Foundation

extension Comparison {
    /// A load the client's memory tier answers, against SQLite's load of the same feed: its row
    /// read and the JSON decoded into films, as an app on SQLite does for every load. Both read
    /// their store each time (the tier's read leaves the payload out when it is the one held).
    /// Then the cold load, with and without a tier, so that the tier costs a cold load nothing.
    func warmLoad(_ films: [Film]) async throws {
        progress("warm and cold loads through CacheClient vs SQLite load + decode")
        let log = try EventLog(path: work + "/warm", options: .init(durability: .unsynced, automaticRetention: false))
        let warmClient = CacheClient(log: log)
        var warm = warmClient.feed("films", at: URL(string: "http://127.0.0.1:9/films.json")!, contract: .films)
        warm.strategy = .cacheOnly
        try await warm.write(films)
        let sqlite = try SQLiteStore(path: work + "/warm-sqlite")
        try sqlite.save(films, key: "films", timestamp: Date())
        func check(_ count: Int) throws { if count != films.count { throw BenchError("loaded \(count) films") } }
        func cold(memoryLimit: Int) async throws -> Int {
            // A new client: an empty tier, so the load reads, inflates and decodes.
            var feed = CacheClient(log: log, options: .init(memoryLimit: memoryLimit))
                .feed("films", at: warm.url, contract: .films)
            feed.strategy = .cacheOnly
            return try await feed.load().items.count
        }
        try check(try await warm.load().items.count)

        let ops = 50
        let samples = try await measureAll(reps: config.reps, ops: ops, [
            { for _ in 0..<ops { try check(try await warm.load().items.count) } },
            { for _ in 0..<ops { try check(try sqlite.loadFilms("films").count) } },
        ])
        // A pair of its own, taken in turns: measured after the SQLite body, either one ran up
        // to a fifth slower than when it ran first.
        let colds = try await measureAll(reps: config.reps, ops: ops, [
            { for _ in 0..<ops { try check(try await cold(memoryLimit: 32 << 20)) } },
            { for _ in 0..<ops { try check(try await cold(memoryLimit: 0)) } },
        ])
        let (warmTime, sqliteTime, coldTier, coldNone) = (samples[0].median, samples[1].median, colds[0].median, colds[1].median)
        rows.append(Row(measure: "warm load, \(films.count) films: CacheClient's memory tier vs SQLite load + decode", cacheLog: us(warmTime),
                        baseline: "SQLite: " + us(sqliteTime), ratio: x(sqliteTime / warmTime) + " faster", target: "≥ 20×", met: sqliteTime / warmTime >= 20))
        rows.append(Row(measure: "  cold load (a new client: read, inflate, decode), with a tier vs without", cacheLog: us(coldTier),
                        baseline: "no tier: " + us(coldNone), ratio: x(coldNone / coldTier), target: "≥ 0.95× (no slower)", met: coldNone / coldTier >= 0.95))
    }
}
