import BenchSupport
import CacheLogKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Comparison {
    /// What an observer costs while nothing happens (CPU time over a few seconds, against the
    /// same seconds without it), and how soon it delivers a change (the write's return to the
    /// observer's value), at its default interval of 50 ms.
    func observe(_ films: [Film]) async throws {
        progress("an observer: idle CPU and the delay of a change")
        let log = try EventLog(path: work + "/observe", options: .init(durability: .unsynced, automaticRetention: false))
        let client = CacheClient(log: log)
        let feed = client.feed("films", at: URL(string: "http://127.0.0.1:9/films.json")!, contract: .films)
        try await feed.write(films)
        let seconds = 3.0

        let quiet = try await cpu(during: seconds)
        let delivered = Delivered()
        let observer = Task {
            for try await value in feed.observe() { await delivered.note(value?.timestamp) }
        }
        defer { observer.cancel() }
        try await delivered.wait(count: 1)
        let observing = try await cpu(during: seconds)
        let idle = max(0, observing - quiet) / seconds

        var delays: [Double] = []
        for index in 0..<10 {
            // Distinct stamps, in the past: a write refuses a timestamp later than now.
            let stamp = Date(timeIntervalSince1970: 1_700_000_000 + Double(index))
            let written = now()
            try await feed.write(films, timestamp: stamp)
            try await delivered.wait(for: stamp)
            delays.append(now() - written)
        }
        delays.sort()
        let median = delays[delays.count / 2]
        rows.append(Row(measure: "an idle observer (50 ms interval): CPU per second", cacheLog: String(format: "%.2f ms/s", idle * 1e3),
                        baseline: "", ratio: String(format: "%.3f%% of a core", idle * 100), target: "≤ 1% of a core", met: idle <= 0.01))
        rows.append(Row(measure: "  a change delivered after (write returned → value), median of 10", cacheLog: ms(median),
                        baseline: "", ratio: "max " + ms(delays.last ?? 0), target: "≤ 100 ms", met: median <= 0.1))
    }

    /// This process's CPU time (user + system) spent over `seconds` of waiting.
    private func cpu(during seconds: Double) async throws -> Double {
        func used() -> Double {
            var usage = rusage()
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
            return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        }
        let before = used()
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        return used() - before
    }
}

/// The timestamps an observer delivered, for the bench to wait on.
private actor Delivered {
    private var stamps: [Date?] = []

    func note(_ stamp: Date?) { stamps.append(stamp) }

    func wait(count: Int) async throws {
        while stamps.count < count { try await Task.sleep(for: .milliseconds(1)) }
    }

    func wait(for stamp: Date) async throws {
        while !stamps.contains(stamp) { try await Task.sleep(for: .milliseconds(1)) }
    }
}
