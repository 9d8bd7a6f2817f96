import CLMDB
import Foundation
import TestSupport
import Testing
@testable import CacheLog

@Suite("Map growth and other processes")
struct LMDBDisciplineTests {
    @Test func append_farPastASmallMap_growsTheMapByItself() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir, mapSize: 64 * 1024)
        let initial = log.environment.mapSize
        // Incompressible payloads: 400 x 8 KiB is about 50 times the initial map.
        var generator = SystemRandomNumberGenerator()
        for i in 0..<400 {
            let bytes = Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) })
            try await log.append([.delete(key: "k\(i % 9)", reason: .replaced), .put(key: "k\(i % 9)", payload: bytes, timestamp: Date())])
        }
        #expect(log.environment.mapSize > initial * 16)
        #expect(try log.lastSeq() == 800)
        #expect(try log.verify().isClean)
    }

    @Test func twoProcesses_theReaderSeesEveryCommitInOrder_neverATornBatch() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path()
        // Both processes start with a 64 KiB map; the writer grows it, so this reader must adopt
        // the larger size (MDB_MAP_RESIZED) to go on reading.
        let log = try makeLog(dir, mapSize: 65536)
        // Start with a tiny map in the writer, so that it grows the map while this process has it open.
        let writer = try ChildProcess(try builtProduct("cachelog-writer"), [db, "150", "--batch", "--map-size", "65536", "--payload-bytes", "2048"])

        let reading = Task { () throws -> (seen: [RecordedEvent], tornStates: Int) in
            var seen: [RecordedEvent] = []
            var tornStates = 0
            for try await item in log.follow(EventQuery(limit: 300), pollInterval: .milliseconds(2)) {
                guard case .event(let event) = item else { Issue.record("corrupt item \(item)"); break }
                seen.append(event)
                // Every state a reader can observe is between batches: each key is live after its put.
                let state = try log.state()
                if state.seq % 2 != 0 { tornStates += 1 }
            }
            return (seen, tornStates)
        }
        // The reading ends with the 300th event, however long a loaded machine takes; a writer
        // that failed commits no more, so then the reading is stopped instead of left waiting.
        let ended = await writer.finish(timeout: .seconds(600))
        #expect(ended.exited && ended.status == 0, "\(ended.stderrText)")
        if !(ended.exited && ended.status == 0) { reading.cancel() }
        let (seen, tornStates) = (try? await reading.value) ?? ([], -1)
        #expect(seen.map(\.seq) == Array(1...300))
        #expect(seen.enumerated().allSatisfy { index, event in event.kind == (index % 2 == 0 ? .delete : .put) })
        #expect(tornStates == 0)
        // The writer grew the map from 64 KiB; this process adopted the new size to keep reading.
        #expect(log.environment.mapSize > 65536)
        #expect(try log.verify().isClean)
    }

    @Test func open_clearsReaderSlotsLeftByAProcessThatDied() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path()
        do {
            let log = try makeLog(dir)
            try await log.append(.put(key: "films", payload: payload("[1]"), timestamp: Date()))
        }
        try await waitUntilClosed(db)
        // Another process takes a reader slot with an open read transaction, then dies by SIGKILL.
        let reader = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/python3"),
            ["-c", "import lmdb, time; env = lmdb.open('\(db)', max_dbs=8); txn = env.begin(); print('ready', flush=True); time.sleep(60)"])
        let deadline = ContinuousClock.now + .seconds(30)
        while (try? String(contentsOf: reader.stdoutFile, encoding: .utf8))?.hasPrefix("ready") != true, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        reader.send(SIGKILL)
        #expect(await reader.finish().stdoutText.hasPrefix("ready"))

        let log = try makeLog(dir)
        // The open already cleared the dead reader's slot: nothing is left for a second check.
        var dead: Int32 = -1
        #expect(mdb_reader_check(log.environment.raw, &dead) == MDB_SUCCESS)
        #expect(dead == 0)
        #expect(try log.retrieve("films")?.payload == payload("[1]"))
    }
}
