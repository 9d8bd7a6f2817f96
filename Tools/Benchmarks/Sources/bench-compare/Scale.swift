import BenchSupport
import CacheLog
import Foundation

/// History at scale (`--scale N`): a log of N events over `--scale-keys` keys, and one key's
/// history, state and retention measured as a user meets them: whole `cachelog` processes.
extension Comparison {
    /// Keys of the scale log, with the prefix image caches use.
    static func scaleKey(_ index: Int) -> String { "image:https://images.example.com/feed/\(index)" }

    /// Small JSON payloads (about 50 bytes), as an image index entry might be.
    static let scalePayloads = (0..<64).map { Data("{\"id\":\($0),\"url\":\"https://images.example.com/\($0).png\"}".utf8) }

    func scale() async throws {
        let events = config.scale, keys = config.scaleKeys
        guard events > 0 else { return }
        guard let cli = config.cli else { notes.append("scale: skipped (no --cli)"); return }
        try await indexCost()

        progress("generating a log of \(events) events over \(keys) keys")
        let path = work + "/scale"
        let t0 = now()
        try await generateScaleLog(path: path, events: events, keys: keys)
        let seconds = now() - t0
        let size = fileSize(path + "/data.mdb")
        rows.append(Row(measure: "write a \(events)-event log over \(keys) keys (batches of 10000 small puts, unsynced)",
                        cacheLog: String(format: "%.0fK events/s", Double(events) / seconds / 1e3),
                        baseline: String(format: "%.0f s, %@", seconds, kb(size)), ratio: String(format: "%.0f B/event", Double(size) / Double(events)),
                        target: "(info)", met: nil))

        var random = SeededGenerator(seed: 7)
        let sample = (0..<20).map { _ in Self.scaleKey(Int.random(in: 0..<keys, using: &random)) }
        let last = UInt64(events)
        // The floor of any whole-process figure: starting the tool at all.
        var floor = Samples()
        for _ in sample {
            let t = now()
            try runQuietly(cli, ["--help"])
            floor.add(now() - t)
        }
        rows.append(Row(measure: "cachelog --help (the process start every row below includes)", cacheLog: ms(floor.median),
                        baseline: "", ratio: "", target: "(info)", met: nil))
        func perKey(_ label: String, target: Double, _ arguments: (String) -> [String]) throws {
            progress(label)
            var samples = Samples()
            for key in sample {
                let t = now()
                try runQuietly(cli, ["--db", path] + arguments(key))
                samples.add(now() - t)
            }
            rows.append(Row(measure: "\(label), \(events)-event log (whole process)", cacheLog: ms(samples.median),
                            baseline: "worst of \(sample.count): " + ms(samples.values.max() ?? .nan), ratio: "after start: " + ms(samples.median - floor.median),
                            target: String(format: "< %.0f ms", target * 1e3), met: (samples.values.max() ?? .infinity) < target))
        }
        // The same questions in process, through the library: what the key index answers them in.
        do {
            let log = try EventLog(path: path, options: .init(readOnly: true))
            var history = Samples(), asOf = Samples()
            for key in sample {
                var t = now()
                let items = try log.events(EventQuery(key: key))
                history.add(now() - t)
                guard !items.isEmpty else { throw BenchError("no history for \(key)") }
                t = now()
                _ = try log.entry(key, asOf: .seq(UInt64.random(in: 1...last, using: &random)))
                asOf.add(now() - t)
            }
            rows.append(Row(measure: "one key's history (events(EventQuery(key:))), in process", cacheLog: ms(history.median),
                            baseline: "worst of \(sample.count): " + ms(history.values.max() ?? .nan), ratio: "", target: "(info)", met: nil))
            rows.append(Row(measure: "one key as of a random seq (entry(_:asOf:)), in process", cacheLog: ms(asOf.median),
                            baseline: "worst of \(sample.count): " + ms(asOf.values.max() ?? .nan), ratio: "", target: "(info)", met: nil))
        }
        try perKey("cachelog replay --key K (about \(events / keys) events)", target: 0.020) { ["replay", "--key", $0, "--format", "jsonl"] }
        try perKey("cachelog audit --key K", target: 0.020) { ["audit", "--key", $0] }
        try perKey("cachelog state --key K (open + one key)", target: 0.050) { ["state", "--key", $0] }
        try perKey("cachelog state --key K --as-of a random seq", target: 0.020) {
            ["state", "--key", $0, "--as-of", String(UInt64.random(in: 1...last, using: &random))]
        }

        progress("rebuild of \(events) events")
        let line = try runProbe(path)
        let f = line.split(separator: " ").compactMap { Double($0) }
        if f.count >= 4 {
            rows.append(Row(measure: "rebuild the state and the key index, \(Int(f[0])) events", cacheLog: String(format: "%.2fM events/s", f[0] / f[1] / 1e6),
                            baseline: "peak heap " + kb(Int(f[2] - f[3])), ratio: "", target: "(info)", met: nil))
        }

        progress("cachelog compact --keep 30d")
        let before = fileSize(path + "/data.mdb")
        let t1 = now()
        try runQuietly(cli, ["--db", path, "--now", "2023-12-01", "compact", "--keep", "30d"])
        let compacted = now() - t1
        let copy = work + "/scale-copy"
        try CPathStore.compactCopy(from: path, to: copy)
        let after = fileSize(copy + "/data.mdb")
        rows.append(Row(measure: "cachelog compact --keep 30d on that log, then LMDB's compacting copy", cacheLog: String(format: "%.1f s", compacted),
                        baseline: "file \(kb(before)) → copy \(kb(after))", ratio: x(Double(before) / Double(max(after, 1))) + " smaller",
                        target: "(info)", met: nil))
    }

    /// Appending with the key index against without it, in the hand-written C path (same record
    /// format, batches of 10000 small puts over many keys), beside CacheLog's own append.
    private func indexCost() async throws {
        progress("append cost of the key index")
        let count = 10_000, batches = 20
        let payloads = Self.scalePayloads
        let keys = (0..<config.scaleKeys).map(Self.scaleKey)
        var keyOffset = 0
        func nextKeys() -> [String] {
            defer { keyOffset = (keyOffset + count) % keys.count }
            return (0..<count).map { keys[(keyOffset + $0) % keys.count] }
        }
        let with = try CPathStore(path: work + "/index-c-with", synced: false, mapSize: 8 << 30, indexed: true)
        let without = try CPathStore(path: work + "/index-c-without", synced: false, mapSize: 8 << 30, indexed: false)
        let log = try EventLog(path: work + "/index-cachelog", options: .init(durability: .unsynced, initialMapSize: 1 << 30))
        let samples = try await measureAll(reps: batches, ops: count, [
            { try with.putMany(keys: nextKeys(), payloads: payloads, count: count, timestamp: 1, recordedAt: 1) },
            { try without.putMany(keys: nextKeys(), payloads: payloads, count: count, timestamp: 1, recordedAt: 1) },
            {
                let batch = nextKeys().enumerated().map { Event.put(key: $1, payload: payloads[$0 % payloads.count], timestamp: Date()) }
                try await log.append(batch)
            },
        ])
        let (cWith, cWithout, engine) = (samples[0].median, samples[1].median, samples[2].median)
        rows.append(Row(measure: "append with the key index vs without (C path, batches of \(count) small puts)",
                        cacheLog: String(format: "CacheLog: %.0fK events/s", 1 / engine / 1e3),
                        baseline: String(format: "C: %.0fK/s with, %.0fK/s without", 1 / cWith / 1e3, 1 / cWithout / 1e3),
                        ratio: x(cWith / cWithout) + " the cost per event", target: "(info)", met: nil))
    }

    /// N events over `keys` keys in batches of 10000 small puts, deletes and expires, recorded a
    /// tenth of a day apart per batch, so that `compact --keep` has history to drop.
    private func generateScaleLog(path: String, events: Int, keys: Int) async throws {
        let clock = SimulatedClock(Date(timeIntervalSince1970: 1_672_531_200)) // 2023-01-01
        let log = try EventLog(path: path, options: .init(durability: .unsynced, initialMapSize: 1 << 32, clock: { clock.now }))
        let payloads = Self.scalePayloads
        var random = SeededGenerator(seed: 11)
        var written = 0
        while written < events {
            let day = clock.now
            var batch: [Event] = []
            while batch.count < min(10_000, events - written) {
                let key = Self.scaleKey(Int.random(in: 0..<keys, using: &random))
                let roll = Int.random(in: 0..<100, using: &random)
                let payload = payloads[Int.random(in: 0..<payloads.count, using: &random)]
                if roll < 90 {
                    batch.append(.put(key: key, payload: payload, timestamp: day))
                } else if roll < 95 {
                    batch.append(.delete(key: key, reason: .explicit))
                } else {
                    batch.append(.expire(key: key, timestamp: day, maxAge: 7 * 86_400))
                }
            }
            try await log.append(batch)
            written += batch.count
            clock.advance(8_640)
        }
        try log.sync()
    }
}
