import Dispatch
import Foundation
import Locking
import TestSupport
import Testing
@testable import CacheLog

/// Issue 31: saves made at once share a commit. A commit that starts while another append is
/// still being validated and compressed on its task waits for it (a moment at most), instead of
/// paying two flushes alone and leaving the other two more right after.
@Suite("A commit gathers the appends on their way", .hangGuard)
struct GatheringCommitTests {
    static func save(_ log: EventLog, _ key: String) throws -> [EventCodec.Prepared] {
        try log.preparation.prepare([.put(key: key, payload: Data("{\"key\":\"\(key)\"}".utf8), timestamp: Date(timeIntervalSince1970: 1))]).events
    }

    @Test func anAppendOnItsWay_whenACommitStarts_sharesThatCommit() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        // A window no machine runs past, so that only the second append's arrival ends the wait.
        let writer = Writer(environment: log.environment, tables: log.tables, clock: log.clock, appliesRetention: false, gatherWindow: .seconds(600))
        // The writer busy with other work while the first append queues, so that this spec
        // sees the moment the writer takes it: its queue empties.
        let busy = DispatchSemaphore(value: 0)
        let started = Locked(false)
        let other = Task {
            try await writer.exclusive {
                started.withLock { $0 = true }
                busy.wait()
            }
        }
        #expect(try await eventually { started.withLock { $0 } })
        writer.expectAppend() // the second save, still compressing on its task
        let first = Task { try await writer.append(try Self.save(log, "a")) }
        #expect(try await eventually { writer.queuedJobs == 1 }, "the first append waits behind the other work")
        busy.signal()
        try await other.value
        #expect(try await eventually { writer.queuedJobs == 0 }, "the writer took the first append")
        let second = try await writer.append(try Self.save(log, "b"), expected: true)
        let firstRange = try await first.value.range
        #expect(writer.commits.withLock { $0 } == 1, "one commit for both")
        #expect(firstRange.upperBound + 1 == second.range.lowerBound)
        #expect(try log.retrieve("a") != nil && log.retrieve("b") != nil)
    }

    @Test func anAppendThatFailsToPrepare_isNoLongerWaitedFor() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        await #expect(throws: CacheLogError.emptyBatch) { try await log.append([]) }
        await #expect(throws: CacheLogError.emptyKey) {
            try await log.append([.put(key: "", payload: Data("x".utf8), timestamp: Date())])
        }
        #expect(log.writer.incomingAppends == 0)
        try await log.append(.put(key: "k", payload: Data("x".utf8), timestamp: Date()))
        #expect(log.writer.incomingAppends == 0)
    }
}
