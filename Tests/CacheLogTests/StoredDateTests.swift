import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

/// A `Date` comes back from the log as it was given (Format.md, "Dates"): the cache timestamps
/// and recording times of 10,000 random dates from 1970 to 2100, every bit of their sub-second
/// part random, read back `==` through every read of the engine, after a rebuild and a compaction,
/// and from a new instance on the file. Seconds since 1970, as format 3 stored them, gave about
/// every other one back a unit in the last place apart.
@Suite("Dates stored exactly")
struct StoredDateTests {
    static let count = 10_000
    static let keys = 300

    /// What the log must hold: put `i` (seq `i + 1`) of key `k(i % keys)`, stamped `timestamps[i]`,
    /// recorded at `recorded[i]` (sorted: recorded time never goes backward).
    struct Model {
        var timestamps: [Date] = []
        var recorded: [Date] = []

        static func key(_ index: Int) -> String { "k\(index % StoredDateTests.keys)" }

        /// The live entry of each key right after `seq`: its put's index.
        func live(asOf seq: Int) -> [String: Int] {
            var live: [String: Int] = [:]
            for index in 0..<min(seq, timestamps.count) { live[Self.key(index)] = index }
            return live
        }
    }

    private func written(_ dir: TemporaryDirectory, seed: UInt64) async throws -> (EventLog, Model, TestClock) {
        var generator = SeededGenerator(seed: seed)
        var model = Model()
        model.timestamps = (0..<Self.count).map { _ in generator.date() }
        model.recorded = (0..<Self.count).map { _ in generator.date() }.sorted()
        let clock = TestClock(model.recorded[0])
        let log = try EventLog(path: dir.path("db"), options: .init(
            durability: .unsynced, checkpointInterval: 64, clock: clock.function, automaticRetention: false))
        for index in 0..<Self.count {
            clock.set(model.recorded[index])
            try await log.append(.put(key: Model.key(index), payload: Data("\(index)".utf8), timestamp: model.timestamps[index]))
        }
        return (log, model, clock)
    }

    /// Every read of `log` gives the model's dates back, bit for bit.
    private func expectExact(_ log: EventLog, _ model: Model, from first: Int = 0, _ label: String) throws {
        let recorded = try events(log, EventQuery(from: .seq(UInt64(first + 1))))
        #expect(recorded.count == Self.count - first, "\(label): \(recorded.count) events")
        let wrong = recorded.filter { event in
            let index = Int(event.seq) - 1
            return event.timestamp != model.timestamps[index] || event.recordedAt != model.recorded[index]
        }
        #expect(wrong.isEmpty, "\(label): \(wrong.count) events read back other dates, first \(wrong.first.map { "seq \($0.seq)" } ?? "")")

        let live = model.live(asOf: Self.count)
        let state = try log.state()
        #expect(state.entries.count == Self.keys)
        for entry in state.entries {
            let index = try #require(live[entry.key])
            #expect(entry.timestamp == model.timestamps[index] && entry.recordedAt == model.recorded[index], "\(label): state of \(entry.key)")
            let stored = try #require(try log.retrieve(entry.key))
            #expect(stored.timestamp == model.timestamps[index] && stored.recordedAt == model.recorded[index], "\(label): retrieve \(entry.key)")
            #expect(try log.entry(entry.key)?.timestamp == model.timestamps[index], "\(label): entry \(entry.key)")
        }

        // As of a seq (checkpoints every 64 events), and as of each recording time.
        var generator = SeededGenerator(seed: 99)
        for _ in 0..<40 {
            let seq = Int.random(in: max(first, Self.keys)...Self.count, using: &generator)
            let asOf = try log.state(asOf: .seq(UInt64(seq)))
            let expected = model.live(asOf: seq)
            #expect(asOf.entries.count == expected.count, "\(label): state as of \(seq)")
            #expect(asOf.entries.allSatisfy { entry in
                expected[entry.key].map { entry.timestamp == model.timestamps[$0] && entry.recordedAt == model.recorded[$0] } ?? false
            }, "\(label): state as of \(seq) holds other dates")
            let byDate = try log.state(asOf: .date(model.recorded[seq - 1]))
            #expect(byDate.seq == UInt64(seq), "\(label): the state as of seq \(seq)'s own recording time is as of seq \(byDate.seq)")
        }
    }

    @Test func tenThousandRandomDates_readBackEqual_throughEveryRead_aRebuild_aCompaction_andANewInstance() async throws {
        let dir = try TemporaryDirectory()
        let (log, model, clock) = try await written(dir, seed: 2026)
        try expectExact(log, model, "appended")

        _ = try await log.rebuildState()
        try expectExact(log, model, "rebuilt")

        // The compaction's clock is past every recording, so the cut removes only history.
        clock.set(model.recorded[Self.count - 1])
        let cut = Self.count / 2
        _ = try await log.compact(before: .seq(UInt64(cut + 1)))
        try log.sync()
        #expect(try log.compactionBase() == UInt64(cut))
        try expectExact(log, model, from: cut, "compacted")
        #expect(try log.verify().isClean)
        _ = log
    }

    @Test func tenThousandRandomDates_readBackEqual_fromANewInstanceOnTheFile() async throws {
        let dir = try TemporaryDirectory()
        do {
            let (log, _, _) = try await written(dir, seed: 7)
            try log.sync()
        }
        try await waitUntilClosed(dir.path("db"))
        var generator = SeededGenerator(seed: 7)
        var model = Model()
        model.timestamps = (0..<Self.count).map { _ in generator.date() }
        model.recorded = (0..<Self.count).map { _ in generator.date() }.sorted()
        let reopened = try EventLog(path: dir.path("db"), options: .init(readOnly: true))
        try expectExact(reopened, model, "reopened")
    }

    /// An expire judges one version by its timestamp's bits: the exact date removes the key, a
    /// date one unit in the last place away does not, whatever the date's sub-second part.
    @Test func anExpire_removesTheVersionOfItsExactTimestamp_andNotOneAUnitInTheLastPlaceApart() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        var generator = SeededGenerator(seed: 3)
        for index in 0..<200 {
            let timestamp = generator.date()
            let key = "k\(index)"
            try await log.append(.put(key: key, payload: Data([1]), timestamp: timestamp))
            let near = Date(timeIntervalSinceReferenceDate: index.isMultiple(of: 2)
                ? timestamp.timeIntervalSinceReferenceDate.nextUp : timestamp.timeIntervalSinceReferenceDate.nextDown)
            try await log.append(.expire(key: key, timestamp: near, maxAge: 60))
            #expect(try log.isLive(key), "\(key): an expire of \(near) removed the version of \(timestamp)")
            try await log.append(.expire(key: key, timestamp: timestamp, maxAge: 60))
            #expect(try !log.isLive(key), "\(key): the expire of its own timestamp left it")
        }
        _ = try await log.rebuildState()
        #expect(try log.state().entries.isEmpty, "the fold agrees with the appends")
    }
}

/// A database written before format 4 (a committed fixture, see its README): every date reads as
/// the date it always read as, seconds since 1970 made a `Date`, before and after the first open
/// for writing, which stamps format 4 and rewrites nothing; what is saved after reads back exactly.
@Suite("Dates of a format 3 database")
struct FormatThreeDateTests {
    static let fixture = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CLITests/Fixtures/format-3/data.mdb")

    private func copy(into dir: TemporaryDirectory) throws -> String {
        let path = dir.path("db")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.fixture.path, toPath: path + "/data.mdb")
        return path
    }

    private static func f64(_ bytes: [UInt8], at offset: Int) -> Double {
        Double(bitPattern: bytes[offset..<(offset + 8)].reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// Each record's recordedAt and timestamp as the build that wrote them read them: the f64 of
    /// seconds since 1970 at bytes 4 and 12 (Format.md), made a `Date`.
    private static func datesAsWritten(_ log: EventLog) throws -> [UInt64: (recordedAt: Date, timestamp: Date)] {
        var dates: [UInt64: (Date, Date)] = [:]
        for (key, record) in try RawLMDB.dump(log, \.events) {
            #expect(record[0] == 1 || record[0] == 2, "the fixture's records are of versions 1 and 2")
            let seq = key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            dates[seq] = (Date(timeIntervalSince1970: f64(record, at: 4)), Date(timeIntervalSince1970: f64(record, at: 12)))
        }
        return dates
    }

    /// The engine reads every date of the fixture as `datesAsWritten` does.
    private func expectAsWritten(_ log: EventLog, _ written: [UInt64: (recordedAt: Date, timestamp: Date)], _ label: String) throws {
        let recorded = try events(log)
        #expect(recorded.count == 59, "\(label)")
        for event in recorded {
            let stored = try #require(written[event.seq])
            #expect(event.recordedAt == stored.recordedAt, "\(label): seq \(event.seq) recorded at")
            if event.kind == .put || event.kind == .expire {
                #expect(event.timestamp == stored.timestamp, "\(label): seq \(event.seq) timestamp")
            }
        }
        // The state from its rows, and as of points served by its checkpoints (every 8 events).
        for entry in try log.state().entries {
            #expect(entry.timestamp == written[entry.seq]?.timestamp && entry.recordedAt == written[entry.seq]?.recordedAt,
                    "\(label): state of \(entry.key)")
            #expect(try log.retrieve(entry.key)?.timestamp == written[entry.seq]?.timestamp, "\(label): retrieve \(entry.key)")
        }
        for seq: UInt64 in [9, 20, 33, 50, 57] {
            for entry in try log.state(asOf: .seq(seq)).entries {
                #expect(entry.timestamp == written[entry.seq]?.timestamp, "\(label): \(entry.key) as of \(seq)")
            }
        }
        #expect(try log.retentionStatus().lastPass?.startedAt == written[59]?.recordedAt, "\(label): the last pass's start")
    }

    @Test func aFormat3Database_readsEveryDateAsItWasStored_andWhatIsSavedAfterReadsBackExactly() async throws {
        let dir = try TemporaryDirectory()
        let path = try copy(into: dir)
        var written: [UInt64: (recordedAt: Date, timestamp: Date)] = [:]
        do {
            let readOnly = try EventLog(path: path, options: .init(readOnly: true))
            #expect(readOnly.environment.tables.stampedFormat == 3)
            written = try Self.datesAsWritten(readOnly)
            try expectAsWritten(readOnly, written, "read-only")
            #expect(try readOnly.verify().isClean)
        }
        try await waitUntilClosed(path)

        let clock = TestClock(try #require(written[59]?.recordedAt) + 3600.000_000_1)
        let log = try EventLog(path: path, options: .init(clock: clock.function, automaticRetention: false))
        let format = try #require(try RawLMDB.dump(log, \.meta)[MetaKey.format])
        #expect(format == [0, 0, 0, 4], "the first open for writing stamps format 4")
        #expect(try RawLMDB.dump(log, \.state).values.allSatisfy { $0.count == 28 }, "and rewrites no state row")
        try expectAsWritten(log, written, "opened for writing")

        var generator = SeededGenerator(seed: 4)
        let saved = generator.date()
        try await log.append([.delete(key: "k2", reason: .replaced), .put(key: "k2", payload: Data([4]), timestamp: saved)])
        #expect(try log.retrieve("k2")?.timestamp == saved)
        #expect(try log.retrieve("k2")?.recordedAt == clock.date)
        #expect(try RawLMDB.dump(log, \.state)[Array("k2".utf8)]?.count == 29, "a new row says how it stores its date")
        #expect(try log.retrieve("k3")?.timestamp == written[try #require(try log.entry("k3")?.seq)]?.timestamp,
                "the rows beside it read as before")

        _ = try await log.rebuildState()
        #expect(try RawLMDB.dump(log, \.state).values.allSatisfy { $0.count == 29 })
        #expect(try log.retrieve("k2")?.timestamp == saved)
        for entry in try log.state().entries where entry.key != "k2" {
            #expect(entry.timestamp == written[entry.seq]?.timestamp, "rebuilt: \(entry.key)")
        }
        #expect(try log.verify().isClean)
    }
}

/// A retention pass's stamps read back as its clock gave them.
@Suite("Dates of retention passes")
struct RetentionStampTests {
    @Test func aPassStartedAtARandomInstant_reportsThatInstantExactly() async throws {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<50 {
            let dir = try TemporaryDirectory()
            let clock = TestClock(generator.date())
            let log = try makeLog(dir, clock: clock)
            try await log.append(.put(key: "films", payload: Data([1]), timestamp: clock.date))
            _ = try await log.applyRetention()
            #expect(try log.retentionStatus().lastPass?.startedAt == clock.date)
        }
    }
}
