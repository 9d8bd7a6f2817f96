import Foundation
import TestSupport
import Testing
@testable import CacheLog

@Suite("Reading the log")
struct ReadTests {
    static func makeHistory(_ dir: TemporaryDirectory) async throws -> (EventLog, TestClock) {
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock)
        for i in 1...10 {
            let key = i % 2 == 0 ? "films" : "genres"
            try await log.append(i % 3 == 0
                ? .delete(key: key, reason: .explicit)
                : .put(key: key, payload: payload("\(i)"), timestamp: clock.date))
            clock.advance(60)
        }
        return (log, clock)
    }

    @Test func retrieve_deliversTheLivePayloadAndTimestamp() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        let cachedAt = Date(timeIntervalSince1970: 1_750_000_000)
        let big = Data((0..<100_000).map { UInt8($0 % 251) })
        try await log.append(.put(key: "images", payload: big, timestamp: cachedAt))
        let value = try #require(try log.retrieve("images"))
        #expect(value.payload == big)
        #expect(value.timestamp == cachedAt)
        #expect(value.seq == 1)
        #expect(try log.retrieve("missing") == nil)
    }

    @Test func events_iterateForwardAndBackwardOverASeqRange() async throws {
        let dir = try TemporaryDirectory()
        let (log, _) = try await Self.makeHistory(dir)
        #expect(try events(log).map(\.seq) == Array(1...10))
        #expect(try events(log, EventQuery(from: .seq(3), to: .seq(6))).map(\.seq) == [3, 4, 5, 6])
        #expect(try events(log, EventQuery(from: .seq(3), to: .seq(6), reverse: true)).map(\.seq) == [6, 5, 4, 3])
        #expect(try events(log, EventQuery(reverse: true, limit: 2)).map(\.seq) == [10, 9])
        #expect(try events(log, EventQuery(from: .seq(11))).isEmpty)
    }

    @Test func events_filterByKeyAndKind() async throws {
        let dir = try TemporaryDirectory()
        let (log, _) = try await Self.makeHistory(dir)
        #expect(try events(log, EventQuery(key: "films")).map(\.seq) == [2, 4, 6, 8, 10])
        #expect(try events(log, EventQuery(kinds: [.delete])).map(\.seq) == [3, 6, 9])
        #expect(try events(log, EventQuery(key: "films", kinds: [.put], limit: 2)).map(\.seq) == [2, 4])
    }

    @Test func events_selectADateRangeByRecordedTime() async throws {
        let dir = try TemporaryDirectory()
        let (log, clock) = try await Self.makeHistory(dir)
        let start = clock.date - 600 // seq 1 was recorded at start, seq n at start + (n-1) minutes
        #expect(try events(log, EventQuery(from: .date(start + 120), to: .date(start + 300))).map(\.seq) == [3, 4, 5, 6])
        #expect(try events(log, EventQuery(from: .date(start + 121))).map(\.seq) == [4, 5, 6, 7, 8, 9, 10])
        #expect(try events(log, EventQuery(to: .date(start - 1))).isEmpty)
    }

    @Test func events_acrossMoreThanOneReadChunk_deliverEveryRecordOnce() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        let count = EventReader.readChunk * 2 + 17
        var batch: [Event] = []
        for i in 0..<count { batch.append(.put(key: "k\(i % 3)", payload: payload("\(i)"), timestamp: Date())) }
        try await log.append(batch)
        #expect(try events(log).map(\.seq) == Array(1...UInt64(count)))
        #expect(try events(log, EventQuery(reverse: true)).map(\.seq) == Array((1...UInt64(count)).reversed()))
        #expect(try events(log, EventQuery(key: "k2")).count == count / 3)
    }

    @Test func follow_deliversExistingEventsThenNewOnesAsTheyAreAppended() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(.put(key: "films", payload: payload("1"), timestamp: Date()))
        let stream = log.follow(EventQuery(limit: 4), pollInterval: .milliseconds(5))
        var seen: [UInt64] = []
        for try await item in stream {
            seen.append(item.seq)
            // The existing event is delivered: the stream is following; the rest is appended now.
            if item.seq == 1 {
                try await log.append(.delete(key: "films", reason: .replaced))
                try await log.append([.put(key: "films", payload: payload("2"), timestamp: Date()), .delete(key: "genres", reason: .explicit)])
            }
        }
        #expect(seen == [1, 2, 3, 4])
    }
}

@Suite("Following")
struct FollowTests {
    @Test func follow_ignoresReverse_andDeliversEveryEventInOrder() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        for i in 1...5 { try await log.append(.put(key: "k\(i)", payload: payload("\(i)"), timestamp: Date())) }
        var seen: [UInt64] = []
        for try await item in log.follow(EventQuery(reverse: true, limit: 5), pollInterval: .milliseconds(5)) {
            seen.append(item.seq)
        }
        #expect(seen == [1, 2, 3, 4, 5])
    }

    @Test func follow_toASeq_endsOnceThatSeqIsDelivered_waitingForItWhenItIsNotWrittenYet() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        for i in 1...2 { try await log.append(.put(key: "k\(i)", payload: payload("\(i)"), timestamp: Date())) }
        var seen: [UInt64] = []
        for try await item in log.follow(EventQuery(to: .seq(4)), pollInterval: .milliseconds(5)) {
            seen.append(item.seq)
            // Each next event is appended once the last one was delivered, so seq 4 is awaited.
            if item.seq >= 2 { try await log.append(.put(key: "k\(item.seq + 1)", payload: payload("\(item.seq + 1)"), timestamp: Date())) }
        }
        #expect(seen == [1, 2, 3, 4])
    }

    @Test func follow_toADate_endsOnceTheClockOrALaterEventIsPastIt() async throws {
        let dir = try TemporaryDirectory()
        let clock = TestClock()
        let log = try makeLog(dir, clock: clock)
        try await log.append(.put(key: "a", payload: payload("1"), timestamp: clock.date))
        let end = clock.date.addingTimeInterval(60)
        clock.advance(120)
        try await log.append(.put(key: "b", payload: payload("2"), timestamp: clock.date))
        var seen: [UInt64] = []
        for try await item in log.follow(EventQuery(to: .date(end)), pollInterval: .milliseconds(5)) { seen.append(item.seq) }
        #expect(seen == [1], "a later event ends it")

        let ahead = clock.date.addingTimeInterval(60)
        seen = []
        for try await item in log.follow(EventQuery(from: .seq(2), to: .date(ahead)), pollInterval: .milliseconds(5)) {
            seen.append(item.seq)
            // Following from seq 2: an event is recorded before the date, then the clock passes it.
            if item.seq == 2 {
                try await log.append(.put(key: "c", payload: payload("3"), timestamp: clock.date))
                clock.advance(61)
            }
        }
        #expect(seen == [2, 3], "the clock passing it ends it, after what was recorded before")
    }
}
