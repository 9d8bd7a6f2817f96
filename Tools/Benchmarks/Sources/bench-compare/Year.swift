import BenchSupport
import CacheLog
import CacheLogKit
import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation

/// Issue 29's year (`--only year`): a year of the apps' saves through the library, on a simulated
/// clock (the engine's `recordedAt`, the loaders' ages and the remote's content all read it; nothing
/// waits), with retention applied by the writer as it goes. The databases are unsynced but one:
/// what is stored, and so the file, is the same synced or not (but for the zeros a synced commit
/// writes ahead of the file's end), and a flush on this shared machine takes 0.1 to 30 ms by
/// itself, which would time the disk, not retention; one synced year shows what a flush adds.
extension Comparison {
    static let yearStart = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z
    static let day: TimeInterval = 86_400
    static let window: TimeInterval = 30 * 86_400

    func year(_ films: [Film]) async throws {
        try await filmsYear(films)
        try await appsYear(films)
        try await postersUnderALimit(films)
    }

    // MARK: 1 and 4: one film feed, a year of two-hourly refreshes

    /// What one year of the film feed left: data.mdb sampled after every save, the saves' wall
    /// clock, and, under a policy, what the window holds at the end.
    struct FilmsYear {
        var largest = 0
        var end = 0
        var largestInUse = 0
        var saves = Samples()
        /// The process's CPU time over each save (every thread, the writer's background work included).
        var cpu = Samples()
        /// The machine's load average when the run began and ended.
        var load: (Double?, Double?) = (nil, nil)
        var window: WindowCheck?
    }

    /// The film feed's history at the end of a year under a window.
    struct WindowCheck {
        /// Refreshes of the window in the log, and how many there were.
        var kept: Int, inWindow: Int
        /// Whether those in the log are exactly the window's, in order.
        var exact: Bool
        /// Records of the key older than the window, and how many of them are puts of one chain
        /// (a whole copy, then deltas) ending with the newest refresh before the window.
        var older: Int, oneChain: Bool
        var clean: Bool

        var met: Bool { exact && (1...9).contains(older) && oneChain && clean }
        var text: String {
            "\(kept) of \(inWindow) in the window; \(older) older" + (oneChain ? " (one chain)" : " (NOT one chain)") + (clean ? "; verify clean" : "; verify NOT clean")
        }
    }

    func filmsYear(_ films: [Film]) async throws {
        let days = config.yearDays
        let refreshes = days * 12
        let deltas = try await filmsYearRun("deltas", films, retention: true, deltas: true)
        let whole = try await filmsYearRun("whole", films, retention: true, deltas: false)
        let none = try await filmsYearRun("no-policy", films, retention: false, deltas: true)
        let noneWhole = try await filmsYearRun("no-policy-whole", films, retention: false, deltas: false)
        let synced = try await filmsYearRun("synced", films, retention: true, deltas: true, durability: .synced)

        let label = "films, \(days) days of 2-hourly refreshes (2 of \(config.items) changed), 30-day window"
        rows.append(Row(measure: label + ": data.mdb, largest of \(refreshes) samples", cacheLog: mb(deltas.largest),
                        baseline: "no policy: \(mb(none.largest))", ratio: x(Double(none.largest) / Double(deltas.largest)) + " smaller",
                        target: "≤ 10 MB", met: deltas.largest <= 10_000_000))
        rows.append(Row(measure: "  the same, at the end (pages in use: \(mb(deltas.largestInUse)) at most)", cacheLog: mb(deltas.end),
                        baseline: "no policy: \(mb(none.end))", ratio: x(Double(none.end) / Double(deltas.end)) + " smaller",
                        target: "≤ 2.5 MB", met: deltas.end <= 2_500_000))
        rows.append(Row(measure: "  the same, puts whole (each delete committed before its put): largest, at the end", cacheLog: "\(mb(whole.largest)), \(mb(whole.end))",
                        baseline: "no policy: \(mb(noneWhole.end))", ratio: x(Double(noneWhole.end) / Double(whole.end)) + " smaller",
                        target: "≤ 10 MB", met: whole.largest <= 10_000_000))
        rows.append(Row(measure: "  no policy (automaticRetention: false): at the end, deltas / whole copies", cacheLog: mb(none.end),
                        baseline: "whole copies: \(mb(noneWhole.end))", ratio: String(format: "%.0f KB a refresh, whole", Double(noneWhole.end) / Double(refreshes) / 1e3),
                        target: "(info)", met: nil))
        for (name, run) in [("deltas", deltas), ("whole", whole)] {
            guard let check = run.window else { continue }
            rows.append(Row(measure: "  refreshes of the last 30 days in the log, older records, verify (\(name))", cacheLog: check.text,
                            baseline: "", ratio: "", target: "all; ≤ 9 older; clean", met: check.met))
        }
        let saves = deltas.saves, p99 = saves.percentile(0.99), worst = saves.values.max() ?? .nan
        rows.append(Row(measure: "save (delete+put, unsynced) while retention runs, \(refreshes) saves of that year: median; p99, max",
                        cacheLog: "\(ms(saves.median)); \(ms(p99)), \(ms(worst))",
                        baseline: "no policy: \(ms(none.saves.median)); \(ms(none.saves.percentile(0.99))), \(ms(none.saves.values.max() ?? .nan))",
                        ratio: "p99 " + x(p99 / saves.median) + " median (no policy: \(x(none.saves.percentile(0.99) / none.saves.median)))",
                        target: "p99 ≤ 10× median; max ≤ 2 s", met: p99 <= 10 * saves.median && worst <= 2))
        let cpu = deltas.cpu
        rows.append(Row(measure: "  the same saves, the process's CPU time in each (all threads): median; p99, max",
                        cacheLog: "\(ms(cpu.median)); \(ms(cpu.percentile(0.99))), \(ms(cpu.values.max() ?? .nan))",
                        baseline: "no policy: \(ms(none.cpu.median)); \(ms(none.cpu.percentile(0.99))), \(ms(none.cpu.values.max() ?? .nan))",
                        ratio: "p99 " + x(cpu.percentile(0.99) / cpu.median) + " median", target: "(info)", met: nil))
        let flushed = synced.saves, flushedP99 = flushed.percentile(0.99)
        rows.append(Row(measure: "  the same year synced (each save waits for its flushes)", cacheLog: "\(ms(flushed.median)); \(ms(flushedP99)), \(ms(flushed.values.max() ?? .nan))",
                        baseline: "", ratio: "p99 " + x(flushedP99 / flushed.median) + " median", target: "(info)", met: nil))
        func load(_ run: FilmsYear) -> String { [run.load.0, run.load.1].map { $0.map { String(format: "%.1f", $0) } ?? "?" }.joined(separator: " → ") }
        notes.append("year: the film feed's saves are CacheLogFeedStore.replace (delete + put in one append, as LocalFeedLoader saves), timed by the wall clock; "
                     + "load average during the timed years: \(load(deltas)) with the policy, \(load(none)) without; "
                     + "the synced year ended at \(mb(synced.end)) (zeros written ahead of small synced commits included)")
    }

    func filmsYearRun(_ name: String, _ films: [Film], retention: Bool, deltas: Bool, durability: EventLog.Durability = .unsynced) async throws -> FilmsYear {
        progress("year: films, \(name)")
        let path = work + "/year-films-" + name
        let clock = SimulatedClock(Self.yearStart)
        let policy = RetentionPolicy(history: Self.window, sizeLimit: nil)
        let log = try EventLog(path: path, options: .init(
            durability: durability, clock: { clock.now }, automaticRetention: retention,
            initialRetention: retention ? (policy, "bench-compare year") : nil))
        let store = CacheLogFeedStore(log: log, key: "films")
        let recorded = RecordedPolicy(maxAge: .days(7), contract: "films")
        var feed = FilmRefreshes(films: films)
        var run = FilmsYear()
        run.load.0 = loadAverage()
        var refreshes: [Date] = []
        for refresh in 0..<(config.yearDays * 12) {
            if refresh > 0 { clock.advance(7_200) }
            let payload = Feeds.payload(feed.next())
            let timestamp = clock.now
            let t0 = now(), c0 = processCPUTime()
            if deltas {
                try await store.replace(with: payload, timestamp: timestamp, policy: recorded, validators: .none)
            } else {
                // The same records as a save, but the put finds no live version to be a delta
                // of: each is stored whole, as every refresh was before deltas.
                try await log.append(.delete(key: "films", reason: .replaced))
                try await log.append(CacheLogFeedStore.put(key: "films", feed: payload, timestamp: timestamp, policy: recorded))
            }
            run.saves.add(now() - t0)
            run.cpu.add(processCPUTime() - c0)
            refreshes.append(timestamp)
            run.largest = max(run.largest, fileSize(path + "/data.mdb"))
            run.largestInUse = max(run.largestInUse, try log.retentionStatus().bytesInUse)
        }
        // An hour after the last save, a pass of its own: a pass the last save started runs to
        // its end with that save's clock, the second is measured back from now.
        run.load.1 = loadAverage()
        clock.advance(3_600)
        if retention {
            try await log.applyRetention()
            try await log.applyRetention()
            run.window = try windowCheck(log, key: "films", refreshes: refreshes, windowStart: clock.now - Self.window)
        }
        try log.sync()
        run.end = fileSize(path + "/data.mdb")
        run.largest = max(run.largest, run.end)
        return run
    }

    /// Whether the log holds every refresh of the window, in order, and older than the window
    /// only the version the key's history starts from with the delta chain it is read through.
    func windowCheck(_ log: EventLog, key: String, refreshes: [Date], windowStart: Date) throws -> WindowCheck {
        let items = try log.events(EventQuery(key: key))
        let events = items.compactMap { item -> RecordedEvent? in if case .event(let event) = item { event } else { nil } }
        let puts = events.filter { $0.kind == .put }
        let inWindow = refreshes.filter { $0 >= windowStart }
        let kept = puts.compactMap(\.timestamp).filter { $0 >= windowStart }
        let older = events.filter { $0.recordedAt < windowStart }
        let olderPuts = older.filter { $0.kind == .put }
        let newestBefore = Array(refreshes.filter { $0 < windowStart }.suffix(olderPuts.count))
        let oneChain = older.count == olderPuts.count && olderPuts.compactMap(\.timestamp) == newestBefore
            && olderPuts.first?.storage == .whole && olderPuts.dropFirst().allSatisfy { if case .delta = $0.storage { true } else { false } }
        return WindowCheck(kept: kept.count, inWindow: inWindow.count, exact: kept == inWindow && items.count == events.count,
                           older: older.count, oneChain: oneChain, clean: try log.verify().isClean)
    }

    // MARK: 2: the five apps and their images

    /// The five apps' remote for a year: each endpoint's content on the simulated clock, changing
    /// at its own rate. The film and image feeds are moved on by the run (one refresh, one
    /// change); the rest is a function of the URL and the day.
    final class AppsRemote: @unchecked Sendable {
        static let films = URL(string: "https://ghibli.example/films")!
        static let images = URL(string: "https://feed.example/v1/feed")!
        static let genres = URL(string: "https://podcasts.example/genres")!
        static let verses = "https://verses.example/search?q={query}&page={page}"
        static let people = "https://swapi.example/api/people/?search={query}"
        static func person(_ id: Int) -> URL { URL(string: "https://swapi.example/api/people/\(id)/")! }
        static func poster(_ index: Int) -> URL { URL(string: "https://posters.example/w600/\(index).jpg")! }

        private let lock = NSLock()
        private let clock: SimulatedClock
        private var filmRefreshes: FilmRefreshes
        private var filmsBody: Data
        private var imageItems: [FeedImage]
        private var imagesBody: Data
        private var imageSeed: UInt64 = 1_000
        private var random = SeededGenerator(seed: 77)
        /// Each query's people, served in pages of 10 as SWAPI pages them.
        private let peopleResults: [String: [Person]]

        init(clock: SimulatedClock, films: [Film]) {
            self.clock = clock
            filmRefreshes = FilmRefreshes(films: films, seed: 123)
            filmsBody = Feeds.payload(films)
            imageItems = AppPayloads.images(count: 100, seed: 5)
            imagesBody = Self.encodeImages(imageItems)
            var results: [String: [Person]] = [:]
            for (index, query) in Self.peopleQueries.enumerated() {
                results[query] = AppPayloads.people(count: 4 + index * 3 % 23, seed: UInt64(300 + index))
            }
            peopleResults = results
        }

        static let verseQueries = ["sky", "light", "love", "peace", "shepherd", "faith", "hope", "river", "mountain", "bread",
                                   "wisdom", "strength", "grace", "mercy", "truth", "joy", "rest", "fire", "wind", "sea"]
        static let peopleQueries = ["sky", "an", "lu", "dar", "ob", "le", "r2", "han", "bo", "ki", "ma", "wa"]

        /// The film feed's next refresh: 2 of its films edited.
        func refreshFilms() {
            lock.withLock { filmsBody = Feeds.payload(filmRefreshes.next()) }
        }

        /// The image feed's next refresh: 0 to 2 new images on top, as many old ones dropping off.
        func refreshImages() {
            lock.withLock {
                let arriving = Int.random(in: 0...2, using: &random)
                guard arriving > 0 else { return }
                imageSeed += 1
                imageItems = Array((AppPayloads.images(count: arriving, seed: imageSeed) + imageItems).prefix(100))
                imagesBody = Self.encodeImages(imageItems)
            }
        }

        static func encodeImages(_ items: [FeedImage]) -> Data {
            struct Root: Encodable { let items: [FeedImage] }
            return Feeds.json(Root(items: items))
        }

        func respond(_ url: URL) -> Data? {
            let day = Int(clock.now.timeIntervalSince(Comparison.yearStart) / Comparison.day)
            switch (url.host ?? "", url.path) {
            case ("ghibli.example", _): return lock.withLock { filmsBody }
            case ("feed.example", _): return lock.withLock { imagesBody }
            case ("podcasts.example", _):
                // A new genre a month.
                struct Root: Encodable { let genres: [Genre] }
                return Feeds.json(Root(genres: AppPayloads.genres(count: 120 + day / 30, seed: 1)))
            case ("verses.example", _):
                let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
                let query = items.first { $0.name == "q" }?.value ?? ""
                let page = Int(items.first { $0.name == "page" }?.value ?? "1") ?? 1
                // Two pages of 20 verses, then none; the ranking shifts a little each month.
                guard page <= 2 else { return Data("[]".utf8) }
                let seed = UInt64((Self.verseQueries.firstIndex(of: query) ?? 99) * 10 + page) &* 31 &+ UInt64(day / 30)
                return Feeds.payload(AppPayloads.verses(count: 20, seed: seed))
            case ("swapi.example", let path) where path.hasPrefix("/api/people/") && path.count > "/api/people/".count:
                let id = Int(path.dropFirst("/api/people/".count).filter(\.isNumber)) ?? 1
                return Feeds.json(AppPayloads.people(count: 1, seed: UInt64(9_000 + id))[0])
            case ("swapi.example", _):
                let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
                let query = items.first { $0.name == "search" }?.value ?? ""
                let page = Int(items.first { $0.name == "page" }?.value ?? "1") ?? 1
                let all = peopleResults[query] ?? []
                let results = Array(all.dropFirst((page - 1) * 10).prefix(10))
                let next = all.count > page * 10 ? URL(string: "https://swapi.example/api/people/?search=\(query)&page=\(page + 1)") : nil
                return Feeds.json(PeoplePage(count: all.count, next: next, previous: nil, results: results))
            case ("posters.example", let path):
                let index = Int(path.split(separator: "/").last?.split(separator: ".").first ?? "") ?? 0
                // Each poster gets new bytes once a week, on a weekday of its own.
                return Posters.bytes(poster: index, week: (day + index % 7) / 7)
            default: return nil
            }
        }
    }

    /// What a year of the five apps left on disk, sampled at the end of every day.
    struct AppsYear {
        var byDay: [Int] = []
        var largest: Int { byDay.max() ?? 0 }
        var end: Int { byDay.last ?? 0 }
        var saves = 0
        var requests = 0
        func at(day: Int) -> Int { byDay.isEmpty ? 0 : byDay[min(max(day, 1), byDay.count) - 1] }
    }

    func appsYear(_ films: [Film]) async throws {
        let policy = try await appsYearRun("default", films, retention: RetentionPolicy.default)
        let noImageHistory = try await appsYearRun(
            "image-no-history", films,
            retention: RetentionPolicy(history: RetentionPolicy.default.history, sizeLimit: RetentionPolicy.default.sizeLimit,
                                       overrides: [.init(.keyPrefix("image:"), history: 0)]))
        let none = try await appsYearRun("no-policy", films, retention: nil)
        let days = config.yearDays
        let label = "five apps, \(days) days (films 2-hourly, image feed 4-hourly, genres daily, 7 searches a day, 300 posters of ~40 KB new weekly)"
        let plateauDay = min(60, days)
        rows.append(Row(measure: label + ", default policy (30 days, 256 MiB): data.mdb at the end", cacheLog: mb(policy.end),
                        baseline: "no policy: \(mb(none.end))", ratio: x(Double(none.end) / Double(policy.end)) + " smaller",
                        target: "end ≤ 1.25× day \(plateauDay)", met: Double(policy.end) <= 1.25 * Double(policy.at(day: plateauDay))))
        rows.append(Row(measure: "  the same, largest daily sample; day \(plateauDay)", cacheLog: "\(mb(policy.largest)); \(mb(policy.at(day: plateauDay)))",
                        baseline: "\(policy.saves) saves, \(policy.requests) requests", ratio: "", target: "(info)", met: nil))
        rows.append(Row(measure: "  images without history (override image: 0 days): at the end, largest", cacheLog: "\(mb(noImageHistory.end)), \(mb(noImageHistory.largest))",
                        baseline: "no policy: \(mb(none.end))", ratio: x(Double(none.end) / Double(noImageHistory.end)) + " smaller",
                        target: "(info)", met: nil))
        var lines = ["| day | default policy | images without history | no policy |", "|---|---|---|---|"]
        for day in [1, 7, 14, 30, 45, 60, 90, 120, 180, 240, 300, 365] where day <= days {
            lines.append("| \(day) | \(mb(policy.at(day: day))) | \(mb(noImageHistory.at(day: day))) | \(mb(none.at(day: day))) |")
        }
        tables.append(("five apps: data.mdb at the end of the day", lines))
    }

    func appsYearRun(_ name: String, _ films: [Film], retention: RetentionPolicy?) async throws -> AppsYear {
        progress("year: five apps, \(name)")
        let path = work + "/year-apps-" + name
        let clock = SimulatedClock(Self.yearStart)
        let remote = AppsRemote(clock: clock, films: films)
        let log = try EventLog(path: path, options: .init(
            durability: .unsynced, clock: { clock.now }, automaticRetention: retention != nil,
            initialRetention: retention.map { ($0, "bench-compare year") }))
        let http = SimulatedRemote { remote.respond($0) }
        let client = CacheClient(log: log, options: CacheClient.Options(http: http))
        let filmsFeed = client.feed("films", at: AppsRemote.films, contract: .films)
        let imageFeed = client.feed("images", at: AppsRemote.images, contract: .images)
        var genres = client.feed("genres", at: AppsRemote.genres, contract: .genres)
        genres.strategy = .cacheFirst
        let posters = (0..<300).map { client.image(at: AppsRemote.poster($0)) }
        var random = SeededGenerator(seed: 2_029)
        var run = AppsYear()
        var saves = 0
        func count<Item>(_ loaded: CacheLoad<Item>) { if loaded.cacheSave.isSaved { saves += 1 } }
        for day in 0..<config.yearDays {
            for hour in 0..<24 {
                if day > 0 || hour > 0 { clock.advance(3_600) }
                if hour % 2 == 0 {
                    remote.refreshFilms()
                    count(try await filmsFeed.load())
                }
                if hour % 4 == 1 {
                    remote.refreshImages()
                    count(try await imageFeed.load())
                }
                if hour == 8 {
                    count(try await genres.load())
                    // The posters on screen: each looked at once a day, fetched when a week old.
                    for poster in posters { count(try await poster.load()) }
                }
                if [9, 13, 18, 22].contains(hour) {
                    let query = AppsRemote.verseQueries[zipf(AppsRemote.verseQueries.count, &random)]
                    let search = client.search(query, at: AppsRemote.verses, contract: .verses)
                    count(try await search.load())
                    count(try await search.loadMore())
                }
                if [10, 15, 20].contains(hour) {
                    let query = AppsRemote.peopleQueries[zipf(AppsRemote.peopleQueries.count, &random)]
                    let search = client.search(query, at: AppsRemote.people, contract: .people)
                    let first = try await search.load()
                    count(first)
                    if first.more == true { count(try await search.loadMore()) }
                }
                if [11, 19].contains(hour) {
                    count(try await client.object(at: AppsRemote.person(Int.random(in: 1...82, using: &random)), contract: .person).load())
                }
            }
            run.byDay.append(fileSize(path + "/data.mdb"))
        }
        run.saves = saves
        run.requests = http.requests
        return run
    }

    /// A rank with P(k) proportional to 1/(k+1): people search for the same few things most.
    private func zipf(_ count: Int, _ random: inout SeededGenerator) -> Int {
        let h = (1...count).reduce(0.0) { $0 + 1 / Double($1) }
        var u = Double.random(in: 0..<h, using: &random)
        for rank in 0..<count {
            u -= 1 / Double(rank + 1)
            if u < 0 { return rank }
        }
        return count - 1
    }

    // MARK: 3: a size limit

    /// The film feed and 100 posters for a year under a 16 MB size limit: the posters' history
    /// alone would pass it within a month, so the limit, not the window, bounds the file.
    func postersUnderALimit(_ films: [Film]) async throws {
        progress("year: films and 100 posters under a 16 MB limit")
        let path = work + "/year-limit"
        let limit = 16_000_000
        let clock = SimulatedClock(Self.yearStart)
        let remote = AppsRemote(clock: clock, films: films)
        let log = try EventLog(path: path, options: .init(
            durability: .unsynced, clock: { clock.now },
            initialRetention: (RetentionPolicy(history: Self.window, sizeLimit: limit), "bench-compare year")))
        let client = CacheClient(log: log, options: CacheClient.Options(http: SimulatedRemote { remote.respond($0) }))
        let filmsFeed = client.feed("films", at: AppsRemote.films, contract: .films)
        let posters = (0..<100).map { client.image(at: AppsRemote.poster($0)) }
        var largest = 0, largestInUse = 0, samples = 0, failedSaves = 0
        func sample<Item>(_ loaded: CacheLoad<Item>) throws {
            if case .failed = loaded.cacheSave { failedSaves += 1 }
            samples += 1
            let file = fileSize(path + "/data.mdb")
            let status = try log.retentionStatus()
            largest = max(largest, file)
            largestInUse = max(largestInUse, status.bytesInUse)
        }
        for refresh in 0..<(config.yearDays * 12) {
            if refresh > 0 { clock.advance(7_200) }
            remote.refreshFilms()
            try sample(try await filmsFeed.load())
            if refresh % 12 == 4 {
                for poster in posters { try sample(try await poster.load()) }
            }
        }
        clock.advance(3_600)
        try await log.applyRetention()
        largest = max(largest, fileSize(path + "/data.mdb"))
        let livePosters = try posters.filter { try log.isLive($0.key) }.count
        let filmsLive = try log.retrieve("films")?.payload.isEmpty == false
        let evicted = try log.events(EventQuery(kinds: [.delete])).filter {
            if case .event(let event) = $0 { event.reason == .evicted } else { false }
        }.count
        let clean = try log.verify().isClean
        rows.append(Row(measure: "films (2-hourly) + 100 posters (~40 KB, new weekly), \(config.yearDays) days, 16 MB size limit: data.mdb, largest of \(samples) samples (after every load)",
                        cacheLog: mb(largest), baseline: "limit \(mb(limit)); pages in use ≤ \(mb(largestInUse))",
                        ratio: x(Double(largest) / Double(limit)) + " the limit", target: "≤ 1.10× the limit", met: Double(largest) <= 1.1 * Double(limit)))
        rows.append(Row(measure: "  the same, at the end: films and posters live, evictions, failed saves, verify",
                        cacheLog: "films \(filmsLive ? "live" : "GONE"), \(livePosters) of 100 posters; \(evicted) evicted; \(failedSaves) failed; \(clean ? "clean" : "NOT clean")",
                        baseline: "", ratio: "", target: "all live; clean", met: filmsLive && livePosters == 100 && failedSaves == 0 && clean))
    }
}

extension Samples {
    /// The value at `fraction` of the sorted samples (nearest rank).
    func percentile(_ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, max(0, Int((fraction * Double(sorted.count)).rounded(.up)) - 1))]
    }
}

/// Decimal megabytes, as issue 29's targets are.
func mb(_ bytes: Int) -> String { String(format: "%.2f MB", Double(bytes) / 1e6) }
