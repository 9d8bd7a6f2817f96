import BenchSupport
import CacheLog
import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation

/// A tool that scripts call in loops pays its process start on every call: `cachelog state` on
/// a small database, and `load --strategy cache-first` of a fresh cache (which asks no remote),
/// beside the `sqlite3` shell answering the same question about the same rows, all as whole
/// processes, interleaved so that the machine's load falls on each alike. Then the binary's size.
extension Comparison {
    func startup() async throws {
        guard let cli = config.cli else { notes.append("startup: skipped (no --cli)"); return }
        guard let sqlite3 = Self.executable(named: "sqlite3") else {
            notes.append("startup: skipped (no sqlite3 on PATH; Debian's package is sqlite3)")
            return
        }
        progress("process start: cachelog state and a fresh cache-first load vs sqlite3")
        let keys = 5
        let stamp = Date(timeIntervalSince1970: 1_796_119_200) // 2026-12-01T10:00:00Z
        let genres = [Genre(id: 1, name: "Comedy"), Genre(id: 2, name: "News"), Genre(id: 3, name: "True Crime")]
        let payload = try JSONEncoder().encode(genres)

        // Five caches saved as `cachelog load --contract genres` saves them (contract, max age).
        let logPath = work + "/startup"
        do {
            let log = try EventLog(path: logPath)
            for index in 0..<keys {
                try await LocalFeedLoader<Genre>(
                    store: CacheLogFeedStore(log: log, key: "key\(index)"), currentDate: { stamp },
                    policy: CachePolicy(maxAge: .days(7)), contract: "genres"
                ).save(genres)
            }
        }
        // The same rows as SQLite would keep them for one cache: key, timestamp, max age, payload.
        let sqlitePath = work + "/startup.sqlite"
        let hex = payload.map { String(format: "%02x", $0) }.joined()
        let values = (0..<keys).map { "('key\($0)', \(stamp.timeIntervalSince1970), 604800, CAST(X'\(hex)' AS TEXT))" }.joined(separator: ",")
        try runQuietly(sqlite3, [sqlitePath, """
            PRAGMA journal_mode=WAL;
            CREATE TABLE state(key TEXT PRIMARY KEY, cached_at REAL, max_age INTEGER, payload BLOB);
            INSERT INTO state VALUES \(values);
            """])
        // The same questions of the same rows: each cache's time, max age, whether it is fresh
        // at the run's clock, and its size; then the payload of a fresh cache, printed whole.
        let age = "(julianday('2026-12-02 10:00:00') - julianday(cached_at, 'unixepoch')) * 86400"
        let stateQuery = "SELECT key, datetime(cached_at, 'unixepoch'), max_age, \(age) < max_age, length(payload) FROM state ORDER BY key"
        let loadQuery = "SELECT payload FROM state WHERE key = 'key0' AND \(age) < max_age"
        guard try output(sqlite3, [sqlitePath, loadQuery]).contains("Comedy") else { throw BenchError("sqlite3 did not print the cached genres") }
        let clock = ["--db", logPath, "--now", "2026-12-02T10:00:00Z"]
        let state = clock + ["state"]
        // A day old with a 7-day max age: served from the cache, no request (nothing listens on
        // port 9 of loopback: a request would fail the run).
        let load = clock + ["load", "http://127.0.0.1:9/genres.json", "--key", "key0", "--contract", "genres", "--strategy", "cache-first"]
        guard try output(cli, load).contains("Comedy") else { throw BenchError("the cache-first load did not print the cached genres") }

        let reps = max(config.reps * 7, 50)
        let samples = try await measureAll(reps: reps, [
            { try self.runQuietly(sqlite3, [sqlitePath, stateQuery]) },
            { try self.runQuietly(cli, state) },
            { try self.runQuietly(sqlite3, [sqlitePath, loadQuery]) },
            { try self.runQuietly(cli, load) },
        ])
        for (name, measured, sqlite) in [
            ("cachelog state, \(keys) keys, vs sqlite3 selecting each row's time, max age, freshness and size", samples[1], samples[0]),
            ("cachelog load --strategy cache-first, fresh cache (no request), vs sqlite3 printing a fresh row's payload", samples[3], samples[2]),
        ] {
            rows.append(Row(measure: name + " (whole processes)",
                            cacheLog: ms(measured.median), baseline: "sqlite3: " + ms(sqlite.median),
                            ratio: x(measured.median / sqlite.median) + " sqlite3's time", target: "≤ 2×", met: measured.median / sqlite.median <= 2))
        }
        rows.append(Row(measure: "cachelog binary (as Tools/install installs it)", cacheLog: String(format: "%.1f MB", Double(fileSize(cli)) / 1_048_576),
                        baseline: "", ratio: "", target: "(info)", met: nil))
    }

    /// `name` as the shell would find it on PATH.
    static func executable(named name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// What `executable arguments` prints on stdout; throws when it fails.
    private func output(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("\(executable) \(arguments.joined(separator: " ")) failed") }
        return String(decoding: data, as: UTF8.self)
    }
}
