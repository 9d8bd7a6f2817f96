import Foundation
import TestSupport
import Testing
@testable import CacheLog

/// A healthy data file may end before its newest commit's last page: LMDB counts the pages a
/// commit allocated and freed again, and never writes them (Format.md). Such a file is a
/// database, not a truncated one.
@Suite("A data file that ends before its last page")
struct ShortDataFileTests {
    /// Commits, with Python's `lmdb`, transactions that fill and empty `meta` again until one
    /// leaves the file shorter than its last page; returns the file's size and the size the meta
    /// implies.
    private func shortenByFreedPages(_ db: String) async throws -> (size: Int, implied: Int) {
        let script = """
        import lmdb, os, sys
        env = lmdb.open(sys.argv[1], max_dbs=16, subdir=True, map_size=64 << 20)
        meta = env.open_db(b"meta", create=False)
        key = lambda i: b"churn-%07d" % i
        with env.begin(write=True, db=meta) as txn:
            for i in range(20000): txn.put(key(i), b"x" * 200)
        for round in range(200):
            with env.begin(write=True, db=meta) as txn:
                # Pages dirtied and emptied in one commit: some are freed before they are written.
                fresh = range(20000 + round * 3000, 20000 + round * 3000 + 3000)
                for i in fresh: txn.put(key(i), b"y" * 300)
                for i in range(round * 600, round * 600 + 3000): txn.delete(key(i))
                for i in fresh[:1500]: txn.delete(key(i))
            size = os.path.getsize(sys.argv[1] + "/data.mdb")
            implied = (env.info()["last_pgno"] + 1) * env.stat()["psize"]
            if size < implied:
                print(size, implied)
                sys.exit(0)
        sys.exit(3)
        """
        let python = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, db], timeout: .seconds(60))
        try #require(python.exited && python.status == 0, "no commit left the file short, or python3-lmdb is missing: \(python.stderrText)")
        let numbers = python.stdoutText.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        try #require(numbers.count == 2)
        return (numbers[0], numbers[1])
    }

    @Test func aFileEndingBeforeItsLastPage_opensReadsAndVerifiesClean_withAndWithoutTheLockFile() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path("db")
        do {
            let log = try makeLog(dir)
            for index in 0..<20 {
                try await log.append(.put(key: "k\(index)", payload: payload("value \(index)"), timestamp: Date(timeIntervalSince1970: Double(index))))
            }
        }
        try await waitUntilClosed(db)
        let (size, implied) = try await shortenByFreedPages(db)
        #expect(size < implied)
        do {
            let log = try makeLog(dir)
            #expect(try log.retrieve("k7")?.payload == payload("value 7"))
            #expect(try log.verify().isClean)
            try await log.append(.put(key: "after", payload: payload("written"), timestamp: Date(timeIntervalSince1970: 100)))
            #expect(try log.retrieve("after")?.payload == payload("written"))
        }
        try await waitUntilClosed(db)
        _ = try await shortenByFreedPages(db)
        let copyReader = try EventLog(path: db, options: EventLog.Options(readOnly: true), withoutLock: true)
        #expect(try copyReader.state().entries.count == 21)
        #expect(try copyReader.verify().isClean)
    }
}
