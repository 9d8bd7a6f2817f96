import CLMDB
import Foundation
import Logging
import TestSupport
import Testing
@testable import CacheLog
#if canImport(Glibc)
import Glibc
#endif

/// A read-only open that may not write `lock.mdb` reads without LMDB's reader table, so another
/// process's writer cannot see it and reuses the pages it would read. Such a reader reads a
/// private copy of one commit instead: nothing a writer does reaches it, a read sees the commit
/// its copy holds whatever is committed meanwhile, and a read of the newest commit copies again
/// once the database has moved on.
@Suite("Reading without the lock file", .hangGuard)
struct UnlockedReadTests {
    @Test func aReadWithoutTheLockFile_answersFromItsCommit_whateverAnotherProcessCommitsDuringIt_andTheNextReadSeesThoseCommits() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path("db")
        do {
            let log = try makeLog(dir)
            let saves = (0..<50).map { i in
                Event.put(key: "k\(i % 7)", payload: payload(String(repeating: "\(i)", count: 300)), timestamp: Date(timeIntervalSince1970: 1_800_000_000))
            }
            for save in saves { try await log.append([save]) }
        }
        try await waitUntilClosed(db)
        let writers = try readDuringCommits(db: db, writer: try builtProduct("cachelog-writer"))
        for writer in writers {
            let result = await writer.finish()
            #expect(result.exited && result.status == 0, "cachelog-writer: \(result.stderrText)")
        }
    }

    /// `Environment.read` may not be called from an async context: the reads happen here.
    private func readDuringCommits(db: String, writer: URL) throws -> [ChildProcess] {
        let environment = try Environment(
            path: db, readOnly: true, noSync: false, mapSize: 64 << 20, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), withoutLock: true)
        #expect(environment.unlocked)
        let tables = LogTables(environment.tables, checkpointInterval: 4096)
        var writers: [ChildProcess] = []
        /// Appends `count` saves from another process, one commit each, and waits for it: the
        /// state rows and counters are rewritten in every commit, so the pages of the commit read
        /// here are freed and, from the third commit on, written over in the data file.
        func commit(_ count: Int) throws {
            let child = try ChildProcess(writer, [db, "\(count)", "--payload-bytes", "2000"])
            writers.append(child)
            while child.isRunning { usleep(1_000) }
        }
        func records(_ txn: Transaction) throws -> [[UInt8]: [UInt8]] {
            var rows: [[UInt8]: [UInt8]] = [:]
            try txn.forEachRow(environment.tables.events) { rows[Array($0.key)] = Array($0.value) }
            return rows
        }

        let before = try environment.read { try records($0) }
        #expect(before.count == 50)
        let (during, after) = try environment.read { txn in
            let first = try records(txn)
            try commit(40)
            return (first, try records(txn))
        }
        #expect(during == before && after == before, "a read saw another commit than the one it began with")

        // What the environment holds is the copy as it was; the newest commit is copied anew.
        #expect(try environment.read(.held) { try tables.counters.lastSeq($0) } == 50)
        #expect(try environment.read { try tables.counters.lastSeq($0) } == 90)
        #expect(try environment.read { try records($0) }.count == 90)
        return writers
    }

    @Test func aLogReadWithoutTheLockFile_followsWhatAnotherProcessAppends_andScansAllOfIt() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path("db")
        do {
            let log = try makeLog(dir)
            try await log.append([.put(key: "films", payload: payload("[]"), timestamp: Date(timeIntervalSince1970: 1_800_000_000))])
        }
        try await waitUntilClosed(db)
        let log = try EventLog(path: db, options: .init(readOnly: true), withoutLock: true)
        #expect(log.environment.unlocked)
        var following = log.follow(pollInterval: .milliseconds(10)).makeAsyncIterator()
        #expect(try await following.next()?.seq == 1)

        let writer = try ChildProcess(try builtProduct("cachelog-writer"), [db, "3"])
        let written = await writer.finish()
        try #require(written.exited && written.status == 0, "cachelog-writer: \(written.stderrText)")
        var followed: [UInt64] = []
        for _ in 0..<3 { followed.append(try await following.next()?.seq ?? 0) }
        #expect(followed == [2, 3, 4])

        #expect(try log.lastSeq() == 4)
        #expect(try log.events().map(\.seq) == [1, 2, 3, 4])
        #expect(try log.stats().lastSeq == 4)
        #expect(try log.keys() == ["films", "k0", "k1", "k2"])
        #expect(try log.verify().isClean)
    }

    /// A process that reads while another keeps committing, run as a reader who may not write
    /// the lock file: root without the capability that overrides file modes (setpriv), or any
    /// other user once the lock file is read-only (the writer opened it before). Reads of the
    /// live file died of SIGABRT on liblmdb's assertions most times; nothing of such a death can
    /// reach this test's process.
    @Test(.enabled(if: geteuid() != 0 || FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "root reads as another user through setpriv"))
    func readsWithoutTheLockFile_whileAnotherProcessKeepsCommitting_answerFromWholeCommits_andNeverDie() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path("db")
        let seeded = try ChildProcess(try builtProduct("cachelog-writer"), [db, "2000", "--unsynced", "--payload-bytes", "200"])
        let seeding = await seeded.finish()
        try #require(seeding.exited && seeding.status == 0, "cachelog-writer: \(seeding.stderrText)")

        // A commit every millisecond or so, each rewriting the pages the previous ones freed.
        let writer = try ChildProcess(try builtProduct("cachelog-writer"), [db, "1000000", "--unsynced", "--delay-ms", "1", "--payload-bytes", "200"])
        defer { writer.send(SIGKILL) }
        let writing = try await eventually(timeout: .seconds(300)) { (try? Data(contentsOf: writer.stdoutFile))?.isEmpty == false }
        try #require(writing, "the writer never committed")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: db + "/lock.mdb")

        let reader = try builtProduct("cachelog-reader")
        let rounds = 20
        let read = geteuid() == 0
            ? try ChildProcess(URL(fileURLWithPath: "/usr/bin/setpriv"), ["--bounding-set=-dac_override,-dac_read_search", reader.path, db, "\(rounds)"])
            : try ChildProcess(reader, [db, "\(rounds)"])
        let result = await read.finish(timeout: .seconds(150))
        #expect(result.exited, "cachelog-reader died of signal \(result.status) (timed out: \(result.timedOut)); it printed \(result.stdoutText)")
        #expect(result.status == 0, "\(result.stdoutText)\(result.stderrText)")
        #expect(writer.isRunning, "the writer stopped before the reads were done")

        let lines = result.stdoutText.split(separator: "\n").map(String.init)
        #expect(lines.first == "without the lock file", "the reader could write the lock file: \(lines)")
        let answers = lines.dropFirst()
        #expect(answers.count == rounds, "\(lines)")
        let seqs = answers.compactMap { $0.hasPrefix("ok ") ? UInt64($0.dropFirst(3)) : nil }
        #expect(answers.allSatisfy { $0 == "busy" || $0.hasPrefix("ok ") }, "\(lines)")
        // A copy fails only when two commits land while it is made: a few rounds at most.
        #expect(seqs.count >= rounds / 2, "most rounds said busy: \(lines)")
        // One open, many commits: each round copies the newest commit again.
        #expect(seqs == seqs.sorted() && (seqs.last ?? 0) > (seqs.first ?? 0), "the rounds did not see the writer's commits: \(lines)")
    }

    /// Where no anonymous memory file can be had, the copy is a temporary file, unlinked at once.
    @Test func aCopyInATemporaryFile_holdsTheNewestCommit_andLeavesNoFileBehind() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path("db")
        do {
            let log = try makeLog(dir)
            for i in 0..<3 { try await log.append([.put(key: "k\(i)", payload: payload("\(i)"), timestamp: Date(timeIntervalSince1970: 1_800_000_000))]) }
        }
        try await waitUntilClosed(db)
        try readCopyInTemporaryFile(db: db, directory: dir.path("copies"))
    }

    private func readCopyInTemporaryFile(db: String, directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let dataFile = try PrivateCopy.openDataFile(db)
        defer { close(dataFile) }
        let (env, commit) = try Environment.openCopy(of: dataFile, path: db, directory: directory)
        defer { mdb_env_close(env) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        let tables = try Tables.open(in: env, path: db, readOnly: true)
        var txn: OpaquePointer?
        try #require(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == MDB_SUCCESS)
        guard let txn else { return }
        defer { mdb_txn_abort(txn) }
        #expect(mdb_txn_id(txn) == commit)
        #expect(try LogTables(tables, checkpointInterval: 4096).counters.lastSeq(Transaction(raw: txn)) == 3)
    }
}
