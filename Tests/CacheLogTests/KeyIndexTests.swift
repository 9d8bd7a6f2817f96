import CLMDB
import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

/// The key index: one key's history read through it is exactly what a scan of the whole log
/// selects, through appends, compactions and rebuilds; a database from before it gets it on its
/// first open for writing; damage to it is named by `verify` and repaired by `rebuild`.
@Suite("Key index")
struct KeyIndexTests {
    static let keys = ["films", "genres", "image:a", "image:b", "search:totoro", "é", "e\u{301}"]

    /// The key's records as a scan of the whole log selects them (no key in the query, so the
    /// index is not used), filtered by key bytes here.
    static func scanned(_ log: EventLog, key: String, _ query: EventQuery) throws -> [UInt64] {
        var unkeyed = query
        unkeyed.limit = nil
        let all = try log.events(unkeyed).compactMap { item -> UInt64? in
            guard case .event(let event) = item, event.key.utf8.elementsEqual(key.utf8) else { return nil }
            return event.seq
        }
        return Array(all.prefix(query.limit ?? .max))
    }

    static func indexed(_ log: EventLog, key: String, _ query: EventQuery) throws -> [UInt64] {
        var keyed = query
        keyed.key = key
        return try log.events(keyed).map(\.seq)
    }

    /// Every entry of the index table, read with LMDB's C API: (key bytes, seq), in index order.
    static func rawEntries(_ log: EventLog) throws -> [[UInt8]] {
        var entries: [[UInt8]] = []
        try RawLMDB.write(log) { txn, _ in
            var keys: MDB_dbi = 0
            try #require(mdb_dbi_open(txn, "keys", UInt32(MDB_DUPSORT | MDB_DUPFIXED), &keys) == MDB_SUCCESS)
            var cursor: OpaquePointer?
            try #require(mdb_cursor_open(txn, keys, &cursor) == MDB_SUCCESS)
            defer { mdb_cursor_close(cursor) }
            var k = MDB_val(), v = MDB_val()
            var op = MDB_FIRST
            while mdb_cursor_get(cursor, &k, &v, op) == MDB_SUCCESS {
                entries.append(Array(UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size))
                    + Array(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)))
                op = MDB_NEXT
            }
        }
        return entries
    }

    /// Every record of the log as the index should list it: key bytes then the big-endian seq.
    static func recordsAsEntries(_ log: EventLog) throws -> [[UInt8]] {
        try log.events().compactMap { item -> [UInt8]? in
            guard case .event(let event) = item else { return nil }
            return Array(event.key.utf8) + RawLMDB.seqKey(event.seq)
        }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The index table holds exactly the log's records; and every key, both directions, with and
    /// without bounds and limits, reads through it what the scan selects.
    static func expectIndexEqualsScan(_ log: EventLog, generator: inout SeededGenerator, _ context: String) throws {
        #expect(try rawEntries(log) == (try recordsAsEntries(log)), "\(context): the index table")
        let last = try log.lastSeq()
        // One key as of a seq, from its own records, is what the whole state as of that seq says
        // (or the same refusal, before the compaction base).
        for _ in 0..<8 {
            let seq = UInt64.random(in: 0...(last + 1), using: &generator)
            let whole = Result { try log.state(asOf: .seq(seq)) }
            for key in keys {
                let one = Result { try log.entry(key, asOf: .seq(seq)) }
                switch (whole, one) {
                case (.success(let state), .success(let entry)):
                    #expect(entry.seq == state.seq && entry.entry == state.entry(for: key), "\(context): \(key) as of \(seq)")
                case (.failure(let a), .failure(let b)):
                    #expect("\(a)" == "\(b)", "\(context): \(key) as of \(seq)")
                default:
                    Issue.record("\(context): \(key) as of \(seq): the state says \(whole), the key \(one)")
                }
            }
        }
        for key in keys + ["absent", String(repeating: "k", count: 511)] {
            for reverse in [false, true] {
                let low = UInt64.random(in: 0...(last + 1), using: &generator)
                let high = UInt64.random(in: low...(last + 2), using: &generator)
                let queries = [
                    EventQuery(reverse: reverse),
                    EventQuery(from: .seq(low), to: .seq(high), reverse: reverse),
                    EventQuery(from: .seq(low), reverse: reverse, limit: Int.random(in: 1...5, using: &generator)),
                ]
                for query in queries {
                    let viaIndex = try indexed(log, key: key, query)
                    let viaScan = try scanned(log, key: key, query)
                    #expect(viaIndex == viaScan, "\(context): key \(key) \(query)")
                }
            }
        }
    }

    /// `keys(withPrefix:)` walks the index one row per key, in chunks of read transactions:
    /// every key once, in byte order (NFC and NFD apart), whatever the chunk boundaries.
    @Test func keys_areEveryKeyOnce_inByteOrder_withOrWithoutAPrefix() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir, clock: TestClock())
        let many = (0..<2500).map { "k\(String(format: "%05d", $0))" }
        for chunk in stride(from: 0, to: many.count, by: 500) {
            try await log.append(many[chunk..<(chunk + 500)].flatMap { key in
                [Event.put(key: key, payload: Data("a".utf8), timestamp: Date()), .delete(key: key, reason: .explicit)]
            })
        }
        for key in Self.keys { try await log.append(.put(key: key, payload: Data("b".utf8), timestamp: Date())) }
        let expected = (many + Self.keys).map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(try log.keys().map { Array($0.utf8) } == expected)
        #expect(try log.keys(withPrefix: "image:") == ["image:a", "image:b"])
        #expect(try log.keys(withPrefix: "k0249") == (2490..<2500).map { "k\(String(format: "%05d", $0))" })
        #expect(try log.keys(withPrefix: "nothing").isEmpty)
        #expect(try log.keys(withPrefix: String(repeating: "x", count: 600)).isEmpty)
    }

    @Test func keyIndex_equalsAScanOfTheLog_overRandomLogsWithCompactionsAndRebuilds() async throws {
        for seed in UInt64(1)...6 {
            var generator = SeededGenerator(seed: seed)
            let dir = try TemporaryDirectory()
            let clock = TestClock()
            // A small interval, so that checkpoints and compaction bases land all over the log.
            let log = try makeLog(dir, clock: clock, checkpointInterval: 7)
            var putAt: [String: Date] = [:]
            for step in 0..<120 {
                let key = Self.keys.randomElement(using: &generator) ?? "films"
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<5:
                    try await log.append([.delete(key: key, reason: .replaced),
                                          .put(key: key, payload: Data("v\(step % 3)".utf8), timestamp: clock.date)])
                    putAt[key] = clock.date
                case 5..<7:
                    try await log.append(.expire(key: key, timestamp: putAt[key] ?? clock.date, maxAge: 60))
                case 7:
                    try await log.append(.delete(key: key, reason: .explicit))
                case 8:
                    let last = try log.lastSeq()
                    try await log.compact(before: .seq(UInt64.random(in: 1...(last + 1), using: &generator)))
                default:
                    try await log.rebuildState()
                }
                clock.advance(60)
                if step % 30 == 29 { try Self.expectIndexEqualsScan(log, generator: &generator, "seed \(seed) step \(step)") }
            }
            #expect(try log.verify().isClean, "seed \(seed)")
        }
    }

    @Test func aDatabaseFromBeforeTheIndex_isReadByScanning_andGetsItsIndexOnItsFirstOpenForWriting() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db")
        // By position: "é" and "e\u{301}" are one String to a dictionary, two keys to LMDB.
        var expected: [[UInt64]] = []
        do {
            let log = try makeLog(dir)
            for step in 0..<40 {
                let key = Self.keys[step % Self.keys.count]
                try await log.append(.put(key: key, payload: Data("v\(step)".utf8), timestamp: Date()))
            }
            expected = try Self.keys.map { try Self.scanned(log, key: $0, EventQuery()) }
            // What a database written before the index looks like: no keys table, format 1.
            try RawLMDB.write(log) { txn, tables in
                var keys: MDB_dbi = 0
                try #require(mdb_dbi_open(txn, "keys", 0, &keys) == MDB_SUCCESS)
                try #require(mdb_drop(txn, keys, 1) == MDB_SUCCESS)
                let one = withUnsafeBytes(of: UInt32(1).bigEndian) { Array($0) }
                try #require(RawLMDB.put(txn, tables.meta, MetaKey.format, one) == MDB_SUCCESS)
            }
        }
        try await waitUntilClosed(path)

        do {
            let readOnly = try makeLog(dir, readOnly: true)
            #expect(readOnly.tables.schema.keyIndex == nil)
            for (key, want) in zip(Self.keys, expected) { #expect(try Self.indexed(readOnly, key: key, EventQuery()) == want, "\(key), by scan") }
            // Every key was written above; without the index they are found by a scan.
            #expect(try readOnly.keys() == Self.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
            #expect(try readOnly.keys(withPrefix: "image:") == ["image:a", "image:b"])
        }
        try await waitUntilClosed(path)

        let log = try makeLog(dir)
        #expect(log.tables.schema.keyIndex != nil)
        #expect(try RawLMDB.dump(log, \.meta)[MetaKey.format] == withUnsafeBytes(of: EventLog.databaseFormat.bigEndian) { Array($0) })
        for (key, want) in zip(Self.keys, expected) { #expect(try Self.indexed(log, key: key, EventQuery()) == want, "\(key), by index") }
        #expect(try log.verify().isClean)
        try await log.append(.put(key: "films", payload: Data("new".utf8), timestamp: Date()))
        #expect(try Self.indexed(log, key: "films", EventQuery(reverse: true, limit: 1)) == [try log.lastSeq()])
    }

    @Test func aDamagedIndex_isNamedByVerify_andRepairedByRebuild() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        for step in 0..<6 {
            try await log.append(.put(key: step % 2 == 0 ? "films" : "genres", payload: Data("v\(step)".utf8), timestamp: Date()))
        }
        // Seq 3 (films) drops out of the index; seq 4 (genres) is listed under films too.
        try RawLMDB.write(log) { txn, _ in
            var keys: MDB_dbi = 0
            try #require(mdb_dbi_open(txn, "keys", UInt32(MDB_DUPSORT | MDB_DUPFIXED), &keys) == MDB_SUCCESS)
            var key = Array("films".utf8), three = RawLMDB.seqKey(3)
            key.withUnsafeMutableBytes { k in
                three.withUnsafeMutableBytes { v in
                    var kv = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
                    var vv = MDB_val(mv_size: v.count, mv_data: v.baseAddress)
                    _ = mdb_del(txn, keys, &kv, &vv)
                }
            }
            #expect(RawLMDB.put(txn, keys, Array("films".utf8), RawLMDB.seqKey(4)) == MDB_SUCCESS)
        }
        #expect(try Self.indexed(log, key: "films", EventQuery()) == [1, 5], "a wrong entry is never delivered")
        let problems = try log.verify().problems
        #expect(problems.map(\.description) == [
            "seq 3: the key index does not list this record",
            "seq 4: the key index lists this record under \"films\", which is not its key",
        ])
        #expect(problems.allSatisfy { $0.fixedByRebuild })

        let report = try await log.rebuildState()
        #expect(report.keyIndexEntriesRepaired == 2)
        #expect(try log.verify().isClean)
        #expect(try Self.indexed(log, key: "films", EventQuery()) == [1, 3, 5])
        #expect(try await log.rebuildState().keyIndexEntriesRepaired == 0)
    }

    @Test func compaction_removesTheIndexEntriesOfTheRecordsItRemoves() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        for step in 0..<10 {
            try await log.append([.delete(key: "films", reason: .replaced),
                                  .put(key: "films", payload: Data("v\(step)".utf8), timestamp: Date())])
        }
        let sizes = Dictionary(uniqueKeysWithValues: try events(log).map { ($0.seq, $0.storedBytes) })
        let report = try await log.compact(before: .seq(15))
        #expect(report.removed > 0)
        let kept = Set(try events(log).map(\.seq))
        let removed = sizes.filter { !kept.contains($0.key) }
        #expect(removed.count == report.removed)
        // Each removed record, and its 8-byte entry in the key index.
        #expect(report.bytesFreed == removed.values.reduce(0, +) + 8 * removed.count)
        #expect(try Self.rawEntries(log) == (try Self.recordsAsEntries(log)))
        let indexed = try Self.indexed(log, key: "films", EventQuery())
        #expect(indexed == (try Self.scanned(log, key: "films", EventQuery())))
        #expect(indexed.first.map { $0 >= 14 } == true, "\(indexed)")
        #expect(try log.verify().isClean)
    }

    @Test(arguments: [UInt64(0), 99_999, 2])
    func anIndexEntryForASeqTheLogCannotHold_isNamedByVerify_andRemovedByRebuild(seq: UInt64) async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        for step in 0..<6 {
            try await log.append([.delete(key: "films", reason: .replaced), .put(key: "films", payload: Data("v\(step)".utf8), timestamp: Date())])
        }
        try await log.compact(before: .seq(9))
        // 0 is no seq, 99999 is past the last one, 2 was compacted away.
        try RawLMDB.write(log) { txn, _ in
            var keys: MDB_dbi = 0
            try #require(mdb_dbi_open(txn, "keys", UInt32(MDB_DUPSORT | MDB_DUPFIXED), &keys) == MDB_SUCCESS)
            #expect(RawLMDB.put(txn, keys, Array("films".utf8), RawLMDB.seqKey(seq)) == MDB_SUCCESS)
        }
        #expect(try log.verify().problems.map(\.description) == [
            "seq \(seq): the key index lists this seq under \"films\", but the log holds no such record",
        ])
        #expect(try await log.rebuildState().keyIndexEntriesRepaired == 1)
        #expect(try log.verify().isClean)
        #expect(try Self.rawEntries(log) == (try Self.recordsAsEntries(log)))
    }

    @Test
    func anIndexEntryThatIsNotASeq_isNamedAsSuch() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(.put(key: "films", payload: Data("v".utf8), timestamp: Date()))
        try RawLMDB.write(log) { txn, _ in
            var keys: MDB_dbi = 0
            try #require(mdb_dbi_open(txn, "other", UInt32(MDB_CREATE), &keys) == MDB_SUCCESS)
            var index: MDB_dbi = 0
            try #require(mdb_dbi_open(txn, "keys", UInt32(MDB_DUPSORT | MDB_DUPFIXED), &index) == MDB_SUCCESS)
            // A fixed-size duplicate table takes values of its one size only: a short value goes
            // under a key of its own, as a damaged page might leave it.
            #expect(RawLMDB.put(txn, index, Array("films2".utf8), [0, 0, 0xFF]) == MDB_SUCCESS)
        }
        #expect(try log.verify().problems.map(\.description) == [
            "the key index holds an entry under \"films2\" that is not a seq",
        ])
        #expect(try await log.rebuildState().keyIndexEntriesRepaired == 1)
        #expect(try log.verify().isClean)
    }

    @Test
    func compaction_keepsThePutsOfTheStateAtTheCut_soStateAsOfLaterPointsKeepsTheirPolicy() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock)
        let saved = clock.date
        try await log.append([.delete(key: "gone", reason: .replaced),
                              .put(key: "gone", payload: Data("g".utf8), timestamp: saved, maxAge: 86_400, metadata: ["contract": "genres"])])
        clock.advance(3_600)
        try await log.append(.put(key: "x", payload: Data("x".utf8), timestamp: clock.date, maxAge: 604_800, metadata: ["contract": "json"]))
        clock.advance(13 * 86_400)
        try await log.append(.expire(key: "gone", timestamp: saved, maxAge: 86_400))
        let before = try log.state(asOf: .seq(3))
        #expect(before.entry(for: "gone")?.maxAge == 86_400)

        try await log.compact(before: .seq(4))

        #expect(try log.state(asOf: .seq(3)) == before, "the policy of each entry at the cut is kept")
        #expect(try log.entry("gone", asOf: .seq(3)).entry == before.entry(for: "gone"))
        #expect(try events(log).map(\.seq) == [2, 3, 4], "the delete before the cut went; the puts the cut's state uses stayed")
        #expect(try log.verify().isClean)
    }

    @Test
    func compactionPastARecordAlreadyGone_removesItsIndexEntryToo() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        for step in 0..<6 {
            try await log.append([.delete(key: "films", reason: .replaced), .put(key: "films", payload: Data("v\(step)".utf8), timestamp: Date())])
        }
        // Seq 3 (a delete) is lost before any compaction: its entry names a record that is gone.
        try RawLMDB.write(log) { txn, tables in RawLMDB.delete(txn, tables.events, RawLMDB.seqKey(3)) }
        try await log.compact(before: .seq(9))
        #expect(try Self.rawEntries(log) == (try Self.recordsAsEntries(log)))
        #expect(try log.verify().isClean)
    }
}
