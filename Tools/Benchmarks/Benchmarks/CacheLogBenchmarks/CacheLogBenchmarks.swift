// The per-operation metrics (wall clock, mallocs, instructions, …) of the operations Tools/bench
// compares, under package-benchmark. In this directory:
//   swift package --scratch-path .build-bench benchmark
// (Tools/bench prints the side-by-side table; this target is for regressions and allocation work.)
import BenchSupport
import Benchmark
import CacheLog
import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation

/// Databases live here for the run; a new directory per process.
let workDirectory = NSTemporaryDirectory() + "cachelog-benchmarks-\(getpid())"

let benchmarks: @Sendable () -> Void = {
    let feeds = (0..<8).map { Feeds.films(count: 100, seed: UInt64($0) + 1) }
    let payloads = feeds.map(Feeds.payload)
    let small = Feeds.smallPayloads(count: 256, seed: 7)
    try? FileManager.default.removeItem(atPath: workDirectory)
    // Leave nothing behind in the temporary directory when the run ends.
    Benchmark.shutdownHook = { try? FileManager.default.removeItem(atPath: workDirectory) }

    let synced = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .instructions, .syscalls],
        maxDuration: .seconds(3), maxIterations: 200)
    let fast = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .throughput, .mallocCountTotal, .instructions],
        maxDuration: .seconds(3), maxIterations: 10_000)

    // MARK: durable save (delete + put, synced)

    Benchmark("save/CacheLog synced", configuration: synced) { benchmark, log in
        for index in benchmark.scaledIterations {
            try await log.append([.delete(key: "films", reason: .replaced),
                                  .put(key: "films", payload: payloads[index % payloads.count], timestamp: Date())])
        }
    } setup: {
        try EventLog(path: workDirectory + "/save-cachelog")
    }

    Benchmark("save/C synced", configuration: synced) { benchmark, store in
        for index in benchmark.scaledIterations {
            let t = Date().timeIntervalSince1970
            try store.save("films", payloads[index % payloads.count], timestamp: t, recordedAt: t)
        }
    } setup: {
        try CPathStore(path: workDirectory + "/save-c", synced: true)
    }

    Benchmark("save/SQLite WAL FULL", configuration: synced) { benchmark, store in
        for index in benchmark.scaledIterations {
            try store.save("films", payload: payloads[index % payloads.count], timestamp: Date())
        }
    } setup: {
        try SQLiteStore(path: workDirectory + "/save-sqlite")
    }

    // MARK: bulk append (unsynced)

    Benchmark("append/CacheLog unsynced", configuration: fast) { benchmark, log in
        for index in benchmark.scaledIterations {
            try await log.append(.put(key: "image:\(index % 1000)", payload: small[index % small.count], timestamp: Date()))
        }
    } setup: {
        try EventLog(path: workDirectory + "/append-cachelog", options: .init(durability: .unsynced, initialMapSize: 1 << 30))
    }

    Benchmark("append/C unsynced", configuration: fast) { benchmark, store in
        for index in benchmark.scaledIterations {
            let t = Date().timeIntervalSince1970
            try store.put("image:\(index % 1000)", small[index % small.count], timestamp: t, recordedAt: t)
        }
    } setup: {
        try CPathStore(path: workDirectory + "/append-c", synced: false)
    }

    // MARK: retrieve + inflate

    Benchmark("retrieve/CacheLog", configuration: fast) { (benchmark: Benchmark, log: EventLog) in
        for _ in benchmark.scaledIterations {
            blackHole(try log.retrieve("films"))
        }
    } setup: {
        let log = try EventLog(path: workDirectory + "/retrieve-cachelog", options: .init(durability: .unsynced))
        try await log.append(.put(key: "films", payload: payloads[0], timestamp: Date()))
        return log
    }

    Benchmark("retrieve/C", configuration: fast) { (benchmark: Benchmark, store: CPathStore) in
        for _ in benchmark.scaledIterations {
            blackHole(try store.retrieve("films"))
        }
    } setup: {
        let store = try CPathStore(path: workDirectory + "/retrieve-c", synced: false)
        let t = Date().timeIntervalSince1970
        try store.save("films", payloads[0], timestamp: t, recordedAt: t)
        return store
    }

    // MARK: the feed use case vs the stores a user would pick instead

    Benchmark("save+load/CacheLog LocalFeedLoader synced", configuration: synced) { (benchmark: Benchmark, loader: LocalFeedLoader<Film>) in
        for index in benchmark.scaledIterations {
            try await loader.save(feeds[index % feeds.count])
            blackHole(try await loader.load())
        }
    } setup: {
        let log = try EventLog(path: workDirectory + "/use-cachelog")
        return LocalFeedLoader<Film>(store: CacheLogFeedStore(log: log, key: "films"), currentDate: { Date() })
    }

    Benchmark("save+load/JSON file fsync", configuration: synced) { benchmark, store in
        for index in benchmark.scaledIterations {
            try store.save(feeds[index % feeds.count], timestamp: Date())
            blackHole(try store.load())
        }
    } setup: {
        try JSONFileStore(directory: workDirectory + "/use-json", durable: true)
    }

    Benchmark("save+load/SQLite WAL FULL", configuration: synced) { benchmark, store in
        for index in benchmark.scaledIterations {
            try store.save(feeds[index % feeds.count], key: "films", timestamp: Date())
            blackHole(try store.loadFilms("films"))
        }
    } setup: {
        try SQLiteStore(path: workDirectory + "/use-sqlite")
    }
}
