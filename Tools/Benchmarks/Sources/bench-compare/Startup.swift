import BenchSupport
import CacheLog
import Foundation

/// A tool that scripts call in loops pays its process start on every call: `cachelog state` on
/// a small database beside the `sqlite3` shell answering the same question about the same rows,
/// both as whole processes, alternated so that the machine's load falls on both alike.
extension Comparison {
    func startup() async throws {
        guard let cli = config.cli else { notes.append("startup: skipped (no --cli)"); return }
        guard let sqlite3 = Self.executable(named: "sqlite3") else {
            notes.append("startup: skipped (no sqlite3 on PATH; Debian's package is sqlite3)")
            return
        }
        progress("process start: cachelog state vs sqlite3")
        let keys = 5
        let stamp = Date(timeIntervalSince1970: 1_796_119_200) // 2026-12-01T10:00:00Z
        let payload = Data(#"{"genres":[{"id":1,"name":"Comedy"},{"id":2,"name":"News"},{"id":3,"name":"True Crime"}]}"#.utf8)

        let logPath = work + "/startup"
        do {
            let log = try EventLog(path: logPath)
            for index in 0..<keys {
                try await log.append([.put(key: "key\(index)", payload: payload, timestamp: stamp, maxAge: 604_800)])
            }
        }
        // The same rows as SQLite would keep them for one cache: key, timestamp, max age, payload.
        let sqlitePath = work + "/startup.sqlite"
        let hex = payload.map { String(format: "%02x", $0) }.joined()
        let values = (0..<keys).map { "('key\($0)', \(stamp.timeIntervalSince1970), 604800, X'\(hex)')" }.joined(separator: ",")
        try runQuietly(sqlite3, [sqlitePath, """
            PRAGMA journal_mode=WAL;
            CREATE TABLE state(key TEXT PRIMARY KEY, cached_at REAL, max_age INTEGER, payload BLOB);
            INSERT INTO state VALUES \(values);
            """])
        let query = "SELECT key, cached_at, max_age, length(payload) FROM state ORDER BY key"

        let reps = max(config.reps * 7, 50)
        var state = Samples(), sqlite = Samples()
        for _ in 0..<reps {
            var t = now()
            try runQuietly(cli, ["--db", logPath, "--now", "2026-12-02T10:00:00Z", "state"])
            state.add(now() - t)
            t = now()
            try runQuietly(sqlite3, [sqlitePath, query])
            sqlite.add(now() - t)
        }
        rows.append(Row(measure: "cachelog state, \(keys) keys, vs sqlite3 selecting the same rows (whole processes)",
                        cacheLog: ms(state.median), baseline: "sqlite3: " + ms(sqlite.median),
                        ratio: x(state.median / sqlite.median) + " sqlite3's time", target: "(info)", met: nil))
    }

    /// `name` as the shell would find it on PATH.
    static func executable(named name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
