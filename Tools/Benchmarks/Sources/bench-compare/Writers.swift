import BenchSupport
import CacheLog
import Foundation

/// N writers saving 100-film feeds at once, every save durable when it returns, against SQLite
/// at the same durability: N tasks of one process (CacheLog's single writer shares one commit,
/// and its flushes, among the saves that arrive together; GRDB's `DatabasePool` serializes its
/// writes, one commit and one WAL flush each), and N processes (each its own writer: LMDB's
/// write lock, SQLite's WAL lock with a busy timeout). Each writer saves its own key; the bytes
/// saved are the same on both sides (the feed's JSON, encoded before the run).
extension Comparison {
    func concurrentWriters(_ payloads: [Data]) async throws {
        let log = try EventLog(path: work + "/writers", options: .init(automaticRetention: false))
        let pool = try SQLitePoolStore(path: work + "/writers-sqlite", synchronous: .full)
        let targets: [Int: Double] = [8: 3, 64: 6]
        for n in Set([1, 8, config.tasks]).sorted() {
            progress("\(n) durable writers (tasks) vs a GRDB DatabasePool")
            let perTask = max(4, 256 / n)
            func round(_ save: @escaping @Sendable (Int, Int) async throws -> Void) async throws {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for task in 0..<n {
                        group.addTask { for round in 0..<perTask { try await save(task, round) } }
                    }
                    try await group.waitForAll()
                }
            }
            let (ours, theirs) = try await measurePair(reps: max(3, config.reps / 2), ops: n * perTask, {
                try await round { task, round in
                    try await log.append([.delete(key: "films-\(task)", reason: .replaced),
                                          .put(key: "films-\(task)", payload: payloads[(task + round) % payloads.count], timestamp: Date())])
                }
            }, {
                try await round { task, round in
                    try await pool.save("films-\(task)", payload: payloads[(task + round) % payloads.count], timestamp: Date())
                }
            })
            let ratio = theirs.median / ours.median
            rows.append(Row(measure: "\(n) \(n == 1 ? "task" : "tasks") saving \(config.items)-film feeds at once, synced, vs SQLite DatabasePool (WAL, FULL)",
                            cacheLog: String(format: "%.0f saves/s", 1 / ours.median), baseline: String(format: "SQLite: %.0f saves/s", 1 / theirs.median),
                            ratio: x(ratio) + " throughput", target: targets[n].map { String(format: "≥ %.0f×", $0) } ?? "(info)",
                            met: targets[n].map { ratio >= $0 }))
        }
        for n in [1, 8] {
            progress("\(n) durable writers (processes)")
            let perProcess = max(8, 64 / n)
            var ours = Samples(), theirs = Samples()
            for rep in 0..<3 {
                ours.add(try processesSaving(n, store: "cachelog", path: work + "/writers-processes", count: perProcess), ops: n * perProcess)
                theirs.add(try processesSaving(n, store: "sqlite", path: work + "/writers-processes-sqlite", count: perProcess), ops: n * perProcess)
                _ = rep
            }
            rows.append(Row(measure: "\(n) \(n == 1 ? "process" : "processes") saving at once, synced, vs SQLite (one connection each, WAL, FULL)",
                            cacheLog: String(format: "%.0f saves/s", 1 / ours.median), baseline: String(format: "SQLite: %.0f saves/s", 1 / theirs.median),
                            ratio: x(theirs.median / ours.median) + " throughput", target: "(info)", met: nil))
        }
    }

    /// Starts `n` writer processes (`bench-compare writer-probe`), waits until each has opened its
    /// store, then lets them all save `count` times at once: the seconds from the start signal to
    /// the last one's end, process start and open left out.
    func processesSaving(_ n: Int, store: String, path: String, count: Int) throws -> Double {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var children: [(Process, Pipe, Pipe)] = []
        for index in 0..<n {
            let process = Process()
            process.executableURL = executable
            process.arguments = ["writer-probe", store, path, "films-\(index)", String(count)]
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            children.append((process, input, output))
        }
        func awaitLine(_ expected: String, from pipe: Pipe) throws {
            var text = ""
            while !text.contains("\n") {
                let data = pipe.fileHandleForReading.availableData
                guard !data.isEmpty else { throw BenchError("a writer-probe ended before '\(expected)'") }
                text += String(decoding: data, as: UTF8.self)
            }
            guard text.hasPrefix(expected) else { throw BenchError("writer-probe said '\(text)', not '\(expected)'") }
        }
        for (_, _, output) in children { try awaitLine("ready", from: output) }
        let t0 = now()
        for (_, input, _) in children { input.fileHandleForWriting.write(Data("go\n".utf8)) }
        for (_, _, output) in children { try awaitLine("done", from: output) }
        let elapsed = now() - t0
        for (process, _, _) in children {
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw BenchError("a writer-probe of \(store) failed") }
        }
        return elapsed
    }
}

/// One writer process of the N-process rows:
///
///     bench-compare writer-probe cachelog|sqlite PATH KEY COUNT
///
/// opens the store (synced; SQLite WAL FULL), says `ready`, waits for a line on stdin, saves
/// COUNT 100-film feeds under KEY, and says `done`.
enum WriterProbe {
    static func run(_ arguments: [String]) async throws {
        guard arguments.count == 4, let count = Int(arguments[3]) else {
            throw BenchError("usage: bench-compare writer-probe cachelog|sqlite PATH KEY COUNT")
        }
        let (store, path, key) = (arguments[0], arguments[1], arguments[2])
        let payloads = Feeds.cycle(count: 100).map(Feeds.payload)
        let log = store == "cachelog" ? try EventLog(path: path, options: .init(automaticRetention: false)) : nil
        let sqlite = store == "sqlite" ? try SQLiteStore(path: path, synchronous: .full) : nil
        guard log != nil || sqlite != nil else { throw BenchError("writer-probe: no store '\(store)'") }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        _ = readLine()
        for index in 0..<count {
            let payload = payloads[index % payloads.count]
            if let log {
                try await log.append([.delete(key: key, reason: .replaced), .put(key: key, payload: payload, timestamp: Date())])
            } else {
                try sqlite?.save(key, payload: payload, timestamp: Date())
            }
        }
        FileHandle.standardOutput.write(Data("done\n".utf8))
    }
}
