import Foundation
import TestSupport
import Testing

/// Retention for cron jobs (`compact --keep`) and one key's history through the key index, checked
/// with the built binary against Python's `lmdb` reading the same file.
@Suite("cachelog compact --keep and the key index", .hangGuard)
struct RetentionTests {
    /// The history's bytes as an outside reader counts them: every record, and 8 bytes per key
    /// index entry. Printed by Python as two numbers.
    static let countBytes = """
        keys = env.open_db(b"keys", txn=txn, dupsort=True, dupfixed=True, create=False)
        records = sum(len(v) for _, v in txn.cursor(db=events))
        entries = sum(1 for _ in txn.cursor(db=keys))
        print(records, entries)
        """

    static func bytes(_ planting: Planting) async throws -> Int {
        let numbers = try await planting.python(countBytes).split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        try #require(numbers.count == 2)
        return numbers[0] + 8 * numbers[1]
    }

    @Test
    func compactKeep_dropsWhatWasRecordedBeforeTheWindow_andReportsTheBytesAnOutsideReaderSawGo() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let planting = Planting(db: sandbox.db)
        let before = try await Self.bytes(planting)

        // Dec 10 minus 8 days: everything recorded before Dec 2 goes, but what the live state uses.
        let result = try await sandbox.cachelog("--now", Day.dec10, "compact", "--keep", "8d")

        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stderr.isEmpty)
        let after = try await Self.bytes(planting)
        #expect(result.stdout.hasPrefix("removed 1 event (\(before - after) bytes); kept 1 earlier still in use; history now starts after seq 2"), "\(result)")
        let replay = try await sandbox.cachelog("replay", "--format", "jsonl")
        #expect(try replay.jsonLines().compactMap { $0.int("seq") }.first == 2)
        #expect(try await sandbox.cachelog("verify").status == ExitCode.ok)
        let again = try await sandbox.cachelog("--now", Day.dec10, "compact", "--keep", "8d")
        #expect(again.stdout.hasPrefix("removed 0 events (0 bytes);"), "\(again)")
    }

    @Test(arguments: [
        [] as [String], ["--keep", "7d", "--before", "3"], ["--keep", "0s"], ["--keep", "-1d"], ["--keep", "7"], ["--keep", "1e9d"],
    ])
    func compact_takesExactlyOneOfBeforeOrKeep_andRefusesABadDuration(_ arguments: [String]) async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let result = try await sandbox.run(["--db", sandbox.db, "compact"] + arguments)
        #expect(result.status == ExitCode.usage, "\(arguments): \(result)")
        #expect(result.stdout.isEmpty)
        #expect(!result.stderr.isEmpty)
        #expect(try await sandbox.cachelog("replay", "--format", "jsonl").jsonLines().count == 8, "nothing removed")
    }

    @Test
    func aDatabaseFromBeforeTheKeyIndex_replaysOneKeyByScanning_saysSoWithVerbose_andIsIndexedByItsFirstWrite() async throws {
        let sandbox = try Sandbox()
        try FileManager.default.createDirectory(atPath: sandbox.db, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: CompatibilityTests.fixture.path, toPath: sandbox.db + "/data.mdb")
        let all = try await sandbox.cachelog("replay", "--format", "jsonl")
        let films = try all.jsonLines().filter { $0.string("key") == "films" }.compactMap { $0.int("seq") }
        #expect(!films.isEmpty)

        let scanned = try await sandbox.cachelog("-v", "replay", "--key", "films", "--format", "jsonl")
        #expect(scanned.status == ExitCode.ok, "\(scanned)")
        #expect(try scanned.jsonLines().compactMap { $0.int("seq") } == films)
        #expect(scanned.stderr.contains("no key index yet"), "\(scanned)")

        let written = try await sandbox.cachelog("--now", "2026-12-20", "validate")
        #expect(written.status == ExitCode.ok, "\(written)")
        let format = try await Planting(db: sandbox.db).python("""
            keys = env.open_db(b"keys", txn=txn, dupsort=True, dupfixed=True, create=False)
            print(struct.unpack(">I", txn.get(b"format", db=meta))[0], sum(1 for _ in txn.cursor(db=keys)), sum(1 for _ in txn.cursor(db=events)))
            """)
        let numbers = format.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(numbers.count == 3 && numbers[0] == 4 && numbers[1] == numbers[2], "format, index entries, records: \(format)")
        // The validation expired films: the key's history is one event longer, read through the index.
        let everything = try await sandbox.cachelog("replay", "--format", "jsonl")
        let filmsNow = try everything.jsonLines().filter { $0.string("key") == "films" }.compactMap { $0.int("seq") }
        #expect(filmsNow.count == films.count + 1)
        let indexed = try await sandbox.cachelog("-v", "replay", "--key", "films", "--format", "jsonl")
        #expect(try indexed.jsonLines().compactMap { $0.int("seq") } == filmsNow)
        #expect(!indexed.stderr.contains("no key index"), "\(indexed)")
    }

    @Test
    func aKeyIndexEntryLost_isNamedByVerify_andRepairedByRebuild_throughTheBinary() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        // An outside program drops the entry of seq 2 (the first films put) from the index.
        try await Planting(db: sandbox.db).python("""
            keys = env.open_db(b"keys", txn=txn, dupsort=True, dupfixed=True, create=False)
            assert txn.delete(b"films", seq(2), db=keys)
            """)
        let replay = try await sandbox.cachelog("replay", "--key", "films", "--format", "jsonl")
        #expect(try replay.jsonLines().compactMap { $0.int("seq") }.contains(2) == false, "reads follow the index")

        let verify = try await sandbox.cachelog("verify", "--format", "json")
        #expect(verify.status == ExitCode.failure, "\(verify)")
        let problems = try #require(try verify.json()["problems"] as? [[String: Any]])
        #expect(problems.count == 1 && problems.first?.int("seq") == 2, "\(verify)")
        #expect(problems.first?.string("message")?.contains("key index") == true)
        #expect(problems.first?["fixedByRebuild"] as? Bool == true)

        let rebuild = try await sandbox.cachelog("rebuild")
        #expect(rebuild.status == ExitCode.ok, "\(rebuild)")
        #expect(rebuild.stdoutLines.contains("key index: repaired 1 entry"), "\(rebuild)")
        #expect(try await sandbox.cachelog("verify").status == ExitCode.ok)
        let again = try await sandbox.cachelog("replay", "--key", "films", "--format", "jsonl")
        #expect(try again.jsonLines().compactMap { $0.int("seq") }.contains(2))
    }
}
