import CacheLog
import Foundation

/// Large logs for the rebuild, open and state-as-of measures, written through CacheLog itself.
public enum LargeLogs {
    /// Appends `events` events about `keys` keys to the (unsynced) log at `path`, in batches of
    /// `batch`, then one 100-item film feed under `films`, then syncs. The mix: 50 % puts, 40 %
    /// saves (delete(replaced) + put), 5 % explicit deletes, 5 % expires of the live version.
    public static func generate(path: String, events: Int, keys: Int, films: Data, seed: UInt64 = 42, batch: Int = 1000) async throws {
        // No retention: the log keeps every event it is said to hold (the default policy would
        // trim this history as it grows).
        let log = try EventLog(path: path, options: .init(durability: .unsynced, initialMapSize: 1 << 30, automaticRetention: false))
        let payloads = Feeds.smallPayloads(count: 512, seed: seed)
        var random = SeededGenerator(seed: seed)
        var live: [Int: Date] = [:]
        var written = 0
        var clock = Date(timeIntervalSince1970: 1_700_000_000)
        while written < events {
            var pending: [Event] = []
            while pending.count < min(batch, events - written) {
                let key = Int.random(in: 0..<keys, using: &random)
                let name = "image:https://images.example.com/feed/\(key)"
                clock += 1
                let roll = Int.random(in: 0..<100, using: &random)
                let payload = payloads[Int.random(in: 0..<payloads.count, using: &random)]
                if roll < 40, pending.count + 2 <= batch, written + pending.count + 2 <= events {
                    pending.append(.delete(key: name, reason: .replaced))
                    pending.append(.put(key: name, payload: payload, timestamp: clock))
                    live[key] = clock
                } else if roll >= 90, let timestamp = live[key] {
                    pending.append(roll < 95 ? .delete(key: name, reason: .explicit) : .expire(key: name, timestamp: timestamp, maxAge: 7 * 86_400))
                    live[key] = nil
                } else {
                    pending.append(.put(key: name, payload: payload, timestamp: clock))
                    live[key] = clock
                }
            }
            try await log.append(pending)
            written += pending.count
        }
        try await log.append([.delete(key: "films", reason: .replaced), .put(key: "films", payload: films, timestamp: clock)])
        try log.sync()
    }
}
