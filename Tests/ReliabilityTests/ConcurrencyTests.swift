import CacheLog
import FeedCache
import FeedCacheLog
import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

/// Issue 6, item 3: many tasks saving, loading and validating on one database lose nothing,
/// duplicate nothing and leave the state equal to the fold of the log.
///
/// Also meant to run under ThreadSanitizer (issue 6): `swift test --sanitize=thread --filter ConcurrencyTests`.
@Suite("Concurrency")
struct ConcurrencyTests {
    static let tasks = 100
    static let operationsPerTask = 100
    static let keys = ["films", "genres", "verses", "people", "images"]

    enum Operation: Sendable { case save, load, validate, validateLater }

    @Test(.hangGuard)
    func concurrency_100TasksOf100MixedOperations_appendEverySaveExactlyOnce_contiguously() async throws {
        let dir = try TemporaryDirectory()
        // A small map, so that it grows while tasks read and write.
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        // The log records on the loaders' clock: a save stamped later than its recording would be
        // judged from the recording.
        let log = try EventLog(path: dir.path(), options: .init(initialMapSize: 256 << 10, clock: { now }))
        let later = now + 8 * 86_400 // every cache saved "now" is expired then

        let counts = try await withThrowingTaskGroup(of: [Operation: Int].self) { group in
            for task in 0..<Self.tasks {
                group.addTask {
                    var generator = SeededGenerator(seed: UInt64(task) &+ 0x5EED)
                    var counts: [Operation: Int] = [:]
                    for step in 0..<Self.operationsPerTask {
                        let key = Self.keys[Int.random(in: 0..<Self.keys.count, using: &generator)]
                        let present = feedLoader(log, key: key, clock: { now })
                        let operation: Operation = switch Int.random(in: 0..<10, using: &generator) {
                        case 0..<5: .save
                        case 5..<8: .load
                        case 8: .validate
                        default: .validateLater
                        }
                        switch operation {
                        case .save:
                            // Unique items per save, so each can be found in the log exactly once.
                            try await present.save([Item(id: task * Self.operationsPerTask + step, text: "\(task)/\(step)")])
                        case .load:
                            let items = try await present.load()
                            #expect(items.count <= 1)
                        case .validate:
                            try await present.validateCache()
                        case .validateLater:
                            try await feedLoader(log, key: key, clock: { later }).validateCache()
                        }
                        counts[operation, default: 0] += 1
                    }
                    return counts
                }
            }
            var total: [Operation: Int] = [:]
            for try await counts in group { total.merge(counts, uniquingKeysWith: +) }
            return total
        }
        let saves = counts[.save, default: 0]
        #expect(counts.values.reduce(0, +) == Self.tasks * Self.operationsPerTask)

        let events = try decodedEvents(log, includePayload: true)
        // Seqs are contiguous from 1 to the last.
        #expect(events.map(\.seq) == Array(stride(from: 1, through: try log.lastSeq(), by: 1)))
        // Every save is in the log exactly once, as delete(replaced) immediately followed by its put.
        let puts = events.filter { $0.kind == .put }
        #expect(puts.count == saves)
        let savedItems = try puts.map { try JSONDecoder().decode([Item].self, from: try #require($0.payload)) }
        #expect(Set(savedItems.map { $0.first?.id ?? -1 }).count == saves)
        for (position, event) in events.enumerated() where event.kind == .put {
            let before = position > 0 ? events[position - 1] : nil
            #expect(before?.kind == .delete && before?.reason == .replaced && before?.key == event.key, "seq \(event.seq)")
        }
        #expect(events.filter { $0.kind == .delete && $0.reason == .replaced }.count == saves)
        // Nothing but saves and validations wrote: no retrieval-error deletes.
        #expect(events.filter { $0.kind == .delete && $0.reason != .replaced }.isEmpty)
        #expect(events.filter { $0.kind == .expire }.count <= counts[.validateLater, default: 0])
        // The state equals the fold.
        let report = try log.verify()
        #expect(report.isClean, "\(report.problems)")
        #expect(try storedState(log) == bruteForceFold(events))
    }

    /// Readers read until the writers are done, and the writers wait halfway until a reader has
    /// seen the log between its first and last seq: the readers overlap the writers, and the map
    /// growth the writes cause, by construction.
    @Test(.hangGuard)
    func concurrency_readersDuringAppendsAndMapGrowth_alwaysSeeAConsistentSnapshot() async throws {
        let dir = try TemporaryDirectory()
        let initialMapSize = 64 << 10
        let log = try EventLog(path: dir.path(), options: .init(initialMapSize: initialMapSize))
        let writers = 8, savesPerWriter = 60
        let last = UInt64(writers * savesPerWriter * 2)
        let overlap = Overlap()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await withThrowingTaskGroup(of: Void.self) { saves in
                    for writer in 0..<writers {
                        saves.addTask {
                            var generator = SeededGenerator(seed: UInt64(writer))
                            for i in 0..<savesPerWriter {
                                while i == savesPerWriter / 2, await overlap.intermediateSeqs.isEmpty {
                                    try await Task.sleep(for: .milliseconds(1))
                                }
                                // Incompressible, so the map must grow many times.
                                let payload = Data(generator.bytes(4096))
                                try await log.append([.delete(key: "w\(writer)", reason: .replaced), .put(key: "w\(writer)", payload: payload, timestamp: Date())])
                                if i % 10 == 0 { await Task.yield() }
                            }
                        }
                    }
                    try await saves.waitForAll()
                }
                await overlap.writersDone()
            }
            for _ in 0..<4 {
                group.addTask {
                    repeat {
                        // verify() reads one snapshot: it must be clean at any moment.
                        let report = try log.verify()
                        #expect(report.isClean, "\(report.problems)")
                        let state = try log.state()
                        #expect(state.seq % 2 == 0, "a reader saw half a batch")
                        if 0 < state.seq && state.seq < last { await overlap.saw(state.seq) }
                        for entry in state.entries { _ = try log.retrieve(entry.key) }
                        await Task.yield()
                    } while await overlap.writing
                }
            }
            try await group.waitForAll()
        }
        #expect(await !overlap.intermediateSeqs.isEmpty)
        #expect(log.environment.mapSize > initialMapSize)
        #expect(try log.lastSeq() == last)
        #expect(try log.verify().isClean)
    }
}

extension ConcurrencyTests {
    /// Many tasks save versions of one key, each a small edit of the same feed, while others
    /// compact the history away: every save makes its delta against whatever version was live
    /// when it was prepared, and the writer keeps it only while that base is still stored. Every
    /// put left in the log reads back exactly what was saved, the live one is the last appended,
    /// chains stay within their bound, and the log verifies clean.
    @Test(.hangGuard)
    func concurrency_manyTasksSavingOneKey_withCompactions_readBackEveryVersionExactly() async throws {
        let dir = try TemporaryDirectory()
        let log = try EventLog(path: dir.path(), options: .init(initialMapSize: 256 << 10))
        var generator = SeededGenerator(seed: 0xDE17A)
        let words = ["sky", "castle", "witch", "island", "wind", "train", "river", "dragon", "moon", "garden", "the", "of", "a"]
        let feed = Array((0..<1_500).map { index in
            "{\"id\":\(index),\"title\":\"\(words.randomElement(using: &generator) ?? "")\"}"
        }.joined(separator: ",").utf8)
        let tasks = 16, savesPerTask = 25
        let saved = try await withThrowingTaskGroup(of: [(UInt64, Data)].self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var generator = SeededGenerator(seed: UInt64(task))
                    var puts: [(UInt64, Data)] = []
                    for step in 0..<savesPerTask {
                        var bytes = feed
                        let at = Int.random(in: 0..<(feed.count - 40), using: &generator)
                        bytes.replaceSubrange(at..<(at + 12), with: Array("<\(task)/\(step)>".utf8))
                        let payload = Data(bytes)
                        let range = try await log.append([.delete(key: "films", reason: .replaced),
                                                          .put(key: "films", payload: payload, timestamp: Date())])
                        puts.append((range.upperBound, payload))
                        if step % 8 == 7 { try await log.compact(before: .seq(range.lowerBound)) }
                    }
                    return puts
                }
            }
            var all: [UInt64: Data] = [:]
            for try await puts in group { for (seq, payload) in puts { all[seq] = payload } }
            return all
        }
        #expect(saved.count == tasks * savesPerTask)
        let stored = try decodedEvents(log, includePayload: true).filter { $0.kind == .put }
        #expect(!stored.isEmpty)
        for put in stored { #expect(put.payload == saved[put.seq], "seq \(put.seq)") }
        let last = try #require(saved.keys.max())
        #expect(try log.retrieve("films")?.payload == saved[last])
        #expect(stored.contains { $0.isDelta }, "saves were stored as deltas")
        let report = try log.verify()
        #expect(report.isClean, "\(report.problems)")
    }
}

/// What the readers of `concurrency_readersDuringAppendsAndMapGrowth…` saw while the writers wrote.
private actor Overlap {
    private(set) var writing = true
    /// The seqs a reader saw strictly between an empty log and the last append.
    private(set) var intermediateSeqs: Set<UInt64> = []

    func writersDone() { writing = false }
    func saw(_ seq: UInt64) { intermediateSeqs.insert(seq) }
}
