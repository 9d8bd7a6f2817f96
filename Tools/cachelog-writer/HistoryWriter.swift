import CacheLog
import Foundation
import Locking
import Seeding

/// `cachelog-writer --history`: a dated history for the report's scale test and screenshot.
/// Events are recorded at synthetic times spread evenly over `days` from `start` (the log's
/// clock is this writer's), in batches of up to 100 (at least 1,000 of them), unsynced, so a
/// million events take a minute, not a day of synced commits.
///
/// Each step picks a key at random (seeded): mostly a save (delete + put, recording the key's
/// max age: 1h, 6h, 1d or 7d by key), sometimes a validation that expires the key's cache when
/// it is past that age, rarely an explicit delete. Every tenth key stops being saved after two
/// thirds of the span, as a feed whose server went away: it goes stale, then missing.
struct HistoryWriter {
    let path: String
    let count: Int
    let keys: Int
    let start: Date
    let days: Int
    let seed: UInt64

    static let largestBatch = 100
    static let maxAges: [TimeInterval] = [3600, 6 * 3600, 86_400, 7 * 86_400]
    /// Names shaped like the five apps' keys, so the page reads like a real cache's.
    static let names = [
        "films", "genres", "images", "search:people:sky", "search:verses:love",
        "image:https://example.com/totoro.jpg", "object:https://swapi.dev/api/people/1/", "search:people:leia",
        "search:verses:hope", "image:https://example.com/ponyo.jpg", "object:https://swapi.dev/api/people/4/", "podcasts",
    ]

    static func name(_ index: Int) -> String {
        index < names.count ? names[index] : "key-\(String(format: "%04d", index))"
    }

    func write() async throws {
        let clock = Locked(start)
        let log = try EventLog(path: path, options: .init(durability: .unsynced, compressionLevel: 1, clock: { clock.withLock { $0 } }))
        var generator = SeededGenerator(seed: seed)
        var live: [Int: Date] = [:]
        let span = TimeInterval(days) * 86_400
        let batch = max(1, min(Self.largestBatch, count / 1000))
        var written = 0
        while written < count {
            // Time advances with the events written, to the whole second.
            let now = start.addingTimeInterval((span * Double(written) / Double(count)).rounded())
            clock.withLock { $0 = now }
            var events: [Event] = []
            while events.count < min(batch, count - written) {
                let index = Int.random(in: 0..<keys, using: &generator)
                let key = Self.name(index)
                let maxAge = Self.maxAges[index % Self.maxAges.count]
                let abandoned = index % 10 == 7 && now.timeIntervalSince(start) > span * 2 / 3
                let roll = Int.random(in: 0..<100, using: &generator)
                if roll < 85 && !abandoned && count - written - events.count >= 2 {
                    let payload = SeededGenerator.payload(seed: seed, index: written + events.count, count: 32)
                    events += [.delete(key: key, reason: .replaced), .put(key: key, payload: payload, timestamp: now, maxAge: maxAge)]
                    live[index] = now
                } else if roll < 97, let cached = live[index], now.timeIntervalSince(cached) >= maxAge {
                    events.append(.expire(key: key, timestamp: cached, maxAge: maxAge))
                    live[index] = nil
                } else if roll >= 97, live[index] != nil {
                    events.append(.delete(key: key, reason: .explicit))
                    live[index] = nil
                }
                // Otherwise validation found it fresh (or there was nothing to delete): no event.
            }
            _ = try await log.append(events)
            written += events.count
        }
        try log.sync()
        FileHandle.standardOutput.write(Data("\(written) events over \(keys) keys from \(start) to \(start.addingTimeInterval(span))\n".utf8))
    }
}
