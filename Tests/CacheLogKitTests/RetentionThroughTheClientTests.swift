import CacheLogKit
import Foundation
import LoopbackHTTP
import Seeding
import TestSupport
import Testing

/// Retention as an app meets it: set once in the client's options, recorded when the client
/// creates the database, and applied by every save, so that a feed refreshed for months keeps a
/// window of history and stays small with no cron job and no operator.
@Suite("CacheClient: retention", .hangGuard)
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
        // They are one chain, a whole copy and the deltas after it, and nothing else of the key
        // is older than the window (the deletes that replaced them went with them).
        let olderPuts = puts.filter { $0.recordedAt < windowStart }
        #expect(olderPuts.first?.storage == .whole, "the oldest kept version holds its whole payload")
        #expect(olderPuts.dropFirst().allSatisfy { $0.isDelta }, "the rest are deltas")
        let olderRecords = try log.events(EventQuery(key: "films")).filter { item in
            if case .event(let event) = item { event.recordedAt < windowStart } else { true }
        }
        #expect(olderRecords.count == olderPuts.count, "\(olderRecords.count) records older than the window")
        #expect(try log.verify().isClean)
        // Past the window's first fill, the file plateaus: LMDB reuses what retention frees.
        let final = try Self.fileSize(world.path)
        #expect(final <= sizeAtDay30 + sizeAtDay30 / 4, "data.mdb grew from \(sizeAtDay30) at day 45 to \(final) at day 60")
    }

    /// A size limit with images whose bytes change every week (issue 29's 100 posters of 40 KB
    /// under 16 MB, scaled down to 40 posters under 4 MiB): within the 30-day window the posters'
    /// versions alone would pass the limit in weeks. Sampled after every load, the pages in use
    /// stay within the limit; the history inside the window goes, not a live cache: the films and
    /// every poster are live at the end, none evicted, every save made.
    ///
    /// The file itself passes the limit by less than a quarter. Its size is not the pages in use:
    /// LMDB writes a 40 KB poster only into a run of ten free pages, and the film deltas saved
    /// between take single pages out of the runs retention freed, so some posters go past the
    /// file's end (Tools/Benchmarks/README.md, "A year under retention"). Where the runs fall
    /// depends on the order of the commits and retention's slices, which timing decides (two
    /// traced runs parted by one page at the first save, and ended 1.07× and 1.17×): measured
    /// 1.07–1.18× the limit over 14 runs. Retention trims further by the file's overrun
    /// (`RetentionTests.aFileGrownPastTheSizeLimit_isTrimmedBelowTheMarginByAsMuchAgain`).
    @Test func aSizeLimit_keepsThePagesInUseWithinIt_andEveryPosterLive_throughWeeksOfNewPosterBytes() async throws {
        let world = try ClientWorld()
        let clock = world.clock
        let start = clock.date
        let version = TestCounter()
        world.server.setHandler { request in
            if request.path == "/films.json" { return .json(Self.films(version: version.next())) }
            guard request.path.hasPrefix("/posters/"), let index = Int(request.path.dropFirst("/posters/".count).prefix { $0.isNumber })
            else { return .notFound }
            // Each poster gets new bytes once a week, on a weekday of its own.
            let day = Int(clock.date.timeIntervalSince(start) / Self.day)
            return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "image/jpeg")], body: Self.poster(index, week: (day + index % 7) / 7))
        }
        let limit = 4 << 20
        let client = try world.client(CacheClient.Options(retention: RetentionPolicy(history: 30 * Self.day, sizeLimit: limit)))
        let films = client.feed("films", at: world.url("/films.json"), contract: .films)
        let posters = (0..<40).map { client.image(at: world.url("/posters/\($0).jpg")) }
        var largest = 0, largestInUse = 0
        var fetches: [Date] = []
        func sample<Item>(_ loaded: CacheLoad<Item>) throws {
            if case .failed(let error) = loaded.cacheSave { Issue.record("a save failed: \(error)") }
            largest = max(largest, try Self.fileSize(world.path))
            largestInUse = max(largestInUse, try client.existingLog()?.retentionStatus().bytesInUse ?? 0)
        }
        for refresh in 0..<(6 * 7 * 12) {
            if refresh > 0 { clock.advance(2 * 3600) }
            try sample(try await films.load())
            guard refresh % 12 == 0 else { continue }
            // The posters on screen once a day: cached for 7 days, then fetched anew.
            for poster in posters {
                let loaded = try await poster.load()
                if loaded.source == .remote { fetches.append(clock.date) }
                try sample(loaded)
            }
        }
        clock.advance(3600)
        let log = try client.log()
        try await log.applyRetention()
        largest = max(largest, try Self.fileSize(world.path))

        #expect(largestInUse <= limit, "\(largestInUse) bytes of pages in use under a limit of \(limit)")
        #expect(largestInUse > limit * 3 / 4, "the limit pressed")
        #expect(Double(largest) <= Double(limit) * 1.25, "data.mdb reached \(largest) bytes under a limit of \(limit)")
        #expect(try posters.allSatisfy { try log.isLive($0.key) }, "every poster is live")
        #expect(try log.retrieve("films") != nil)
        let evictions = try log.events(EventQuery(kinds: [.delete])).filter { item in
            if case .event(let event) = item { event.reason == .evicted } else { false }
        }
        #expect(evictions.isEmpty, "history made the room, not live caches")
        // The limit did the work, not the window: versions fetched within the window are gone.
        let windowStart = clock.date.addingTimeInterval(-30 * Self.day)
        let keptInWindow = try log.events(EventQuery(kinds: [.put])).filter { item in
            if case .event(let event) = item { event.key.hasPrefix("image:") && event.recordedAt >= windowStart } else { false }
        }.count
        let fetchedInWindow = fetches.filter { $0 >= windowStart }.count
        #expect(keptInWindow < fetchedInWindow, "\(keptInWindow) poster versions of the window kept of \(fetchedInWindow) fetched")
        #expect(try log.verify().isClean)
    }

    /// Image data as a poster server sends it: incompressible bytes, about 40 KB, new each `week`.
    static func poster(_ index: Int, week: Int) -> Data {
        var generator = SeededGenerator(seed: UInt64(index) << 32 | UInt64(week))
        let length = Int.random(in: 36_000...44_000, using: &generator)
        let words = (0..<(length + 7) / 8).map { _ in generator.next() }
        return words.withUnsafeBytes { Data($0.prefix(length)) }
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
