import CacheLogKit
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// Retention as an app meets it: set once in the client's options, recorded when the client
/// creates the database, and applied by every save, so that a feed refreshed for months keeps a
/// window of history and stays small with no cron job and no operator.
@Suite("CacheClient: retention", .timeLimit(.minutes(5)))
struct RetentionThroughTheClientTests {
    private static let day: TimeInterval = 86_400

    /// A 100-film feed whose films `changed` (indexes) carry `version` in their description.
    static func films(version: Int, changing: Int = 2) -> String {
        let items = (0..<100).map { index -> String in
            let edition = index < changing ? version : 0
            let id = String(format: "%08x-0000-4000-8000-%012x", index, index)
            return #"{"id":"\#(id)","title":"Film \#(index)","description":"A film about the number \#(index), edition \#(edition), with a synopsis long enough to be a real one.","image":"https://example.com/posters/\#(index).jpg","url":"https://example.com/films/\#(id)"}"#
        }
        return "[" + items.joined(separator: ",") + "]"
    }

    @Test func optionsRetention_isRecordedWhenTheClientCreatesTheDatabase_andAnExistingOneKeepsItsOwn() async throws {
        let world = try ClientWorld(routes: ["/films.json": .json(Self.films(version: 1))])
        let policy = RetentionPolicy(history: 7 * Self.day, sizeLimit: 16 << 20, overrides: [.init(.keyPrefix("image:"), history: 0)])
        let client = try world.client(CacheClient.Options(retention: policy))

        _ = try await client.feed("films", at: world.url("/films.json"), contract: .films).load()

        let log = try client.log()
        #expect(try log.retentionPolicy() == (policy, 1), "the policy is the database's first record")
        let recorded = try #require(try log.events(EventQuery(kinds: [.retention])).first)
        guard case .event(let event) = recorded else { Issue.record("not an event"); return }
        #expect(event.retention?.by.hasPrefix("CacheClient (") == true, "\(event.retention?.by ?? "")")

        // Another client with another policy on the same database leaves the recorded one.
        let other = CacheClient(log: log, options: CacheClient.Options(retention: RetentionPolicy(history: nil, sizeLimit: nil)))
        _ = try await other.feed("films", at: world.url("/films.json"), contract: .films).load()
        #expect(try log.retentionPolicy().policy == policy)
    }

    /// Two months of two-hourly refreshes under a 30-day window, 2 films of 100 changing each
    /// time: every refresh of the last 30 days is in the log, nothing older but the version the
    /// history starts from, and the file stops growing once the window is full. (A year, with the
    /// bytes it takes, is `Tools/bench --only year`.)
    @Test func monthsOfRefreshes_keepTheWindowsRefreshes_andNothingOlder_andTheFileStopsGrowing() async throws {
        let world = try ClientWorld()
        let version = TestCounter()
        world.server.setHandler { _ in .json(Self.films(version: version.next())) }
        let client = try world.client(CacheClient.Options(retention: RetentionPolicy(history: 30 * Self.day, sizeLimit: nil)))
        let films = client.feed("films", at: world.url("/films.json"), contract: .films)
        var refreshes: [Date] = []
        var sizeAtDay30 = 0
        for refresh in 0..<(60 * 12) {
            if refresh > 0 { world.clock.advance(2 * 3600) }
            let loaded = try await films.load()
            #expect(loaded.isCached)
            refreshes.append(world.clock.date)
            if refresh == 45 * 12 { sizeAtDay30 = try Self.fileSize(world.path) }
        }
        // One pass more, later than the last save, as the writer makes them.
        world.clock.advance(3600)
        let log = try client.log()
        try await log.applyRetention()

        let windowStart = world.clock.date.addingTimeInterval(-30 * Self.day)
        let puts = try log.events(EventQuery(key: "films", kinds: [.put])).compactMap { item -> RecordedEvent? in
            if case .event(let event) = item { return event } else { return nil }
        }
        let inside = refreshes.filter { $0 >= windowStart }
        let older = puts.compactMap(\.timestamp).filter { $0 < windowStart }
        #expect(Array(puts.compactMap(\.timestamp).suffix(inside.count)) == inside, "every refresh of the window, in order")
        // Older: the version the history starts from, and the versions the window's first ones
        // are read through (a refresh is stored as a delta against the one before it, in chains
        // at most 8 deep): never more.
        #expect((1...9).contains(older.count), "\(older.count) versions older than the window")
        #expect(older == Array(refreshes.filter { $0 < windowStart }.suffix(older.count)), "the newest of the older versions, nothing from further back")
        #expect(try log.verify().isClean)
        // Past the window's first fill, the file plateaus: LMDB reuses what retention frees.
        let final = try Self.fileSize(world.path)
        #expect(final <= sizeAtDay30 + sizeAtDay30 / 4, "data.mdb grew from \(sizeAtDay30) at day 45 to \(final) at day 60")
    }

    private static func fileSize(_ directory: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: directory + "/data.mdb")[.size] as? Int)
    }
}

/// A counter the loopback server's handler moves, from its own thread.
private final class TestCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    func next() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
}
