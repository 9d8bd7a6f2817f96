import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// A damaged database, as a user meets it: bytes planted with Python's `lmdb` module (an
/// independent reader), then the built `cachelog` run as a subprocess. The tool must name the
/// damage, keep serving what the log still holds, heal through the use cases, and never die by a signal.
@Suite("cachelog on a damaged database", .hangGuard)
struct DamageTests {
    private func load(_ sandbox: Sandbox, at now: String, url: String? = nil, key: String = "films", contract: String = "films") async throws -> CLIResult {
        try await sandbox.cachelog("--now", now, "load", url ?? sandbox.url("/\(contract).json"), "--key", key, "--contract", contract, "--format", "json")
    }

    private func verifyProblems(_ sandbox: Sandbox) async throws -> (status: Int32, problems: [[String: Any]]) {
        let verified = try await sandbox.cachelog("verify", "--format", "json")
        #expect(!looksLikeACrash(verified.stderr), "\(verified)")
        return (verified.status, try verified.json()["problems"] as? [[String: Any]] ?? [])
    }

    /// `state --payload` read a damaged put as fresh with a null payload and exit 0. It says the
    /// payload is unreadable, as load does: in the row, in JSON (which stays valid), on stderr,
    /// exit 1; the other entries are shown whole.
    @Test
    func statePayload_ofAPutThatFailsItsChecks_saysItIsUnreadable_exitOne() async throws {
        let sandbox = try Sandbox()
        try #require(try await load(sandbox, at: Day.dec1).status == ExitCode.ok)
        try #require(try await load(sandbox, at: Day.dec1, key: "genres", contract: "genres").status == ExitCode.ok)
        try await Planting(db: sandbox.db).flipByte(ofRecord: 2, offsetFromEnd: 1) // the films put's stored CRC
        let says = "cachelog: cache unreadable: films (corrupt record at seq 2: checksum mismatch); 'cachelog verify' names the damage"

        let text = try await sandbox.cachelog("--now", Day.dec2, "state", "--payload")
        let json = try await sandbox.cachelog("--now", Day.dec2, "state", "--payload", "--format", "json")

        #expect(text.status == ExitCode.failure && text.stderrLines == [says], "\(text)")
        #expect(text.stdoutLines.contains("    payload: unreadable (corrupt record at seq 2: checksum mismatch)"), "\(text)")
        #expect(text.stdoutLines.contains { $0.hasPrefix("    payload: {\"genres\"") || $0.hasPrefix("    payload: [") }, "\(text)")
        #expect(json.status == ExitCode.failure && json.stderrLines == [says], "\(json)")
        let entries = try #require(try json.json()["entries"] as? [[String: Any]], "\(json)")
        let films = try #require(entries.first { $0.string("key") == "films" })
        #expect(films["payload"] is NSNull && films.string("payloadError") == "corrupt record at seq 2: checksum mismatch", "\(json)")
        let genres = try #require(entries.first { $0.string("key") == "genres" })
        #expect(genres["payload"] != nil && !(genres["payload"] is NSNull) && genres["payloadError"] == nil, "\(json)")
    }

    /// LMDB keeps no checksum on its own pages: a damaged branch page made it trip one of its
    /// assertions (abort) or fail a read with a code of its own. Every command then ends with a
    /// line that says the database's own pages are damaged and what to do, exit 1, never by a
    /// signal, and JSON stays valid.
    @Test
    func aDamagedBranchPageOfLMDB_endsEveryCommandWithOneLineSayingSo_exitOne_neverBySignal() async throws {
        let sandbox = try Sandbox()
        // A search of 600 people caches each person as well: the events table gets branch pages.
        let results = (0..<600).map { #"{"name":"Person \#($0)","url":"\#(sandbox.url("/people/\($0).json"))"}"# }
        let page = #"{"count":600,"next":null,"previous":null,"results":[\#(results.joined(separator: ","))]}"#
        sandbox.server.setHandler(LoopbackHTTPServer.routes(["/people-sky.json": .json(page)]))
        let loaded = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/people-{query}.json"), "--contract", "people", "--query", "sky")
        try #require(loaded.status == ExitCode.ok, "\(loaded)")
        // The count of entries of every branch page, in the free pages too: one of them is the
        // live root of the events table. (The page size is the free table's first field in the
        // meta page, as lmdb.h lays out MDB_meta.)
        let script = """
            import struct, sys
            path = sys.argv[1] + "/data.mdb"
            data = bytearray(open(path, "rb").read())
            size = struct.unpack_from("<I", data, 16 + 4 + 4 + 8 + 8)[0]
            branches = [n for n in range(2, len(data) // size) if struct.unpack_from("<H", data, n * size + 10)[0] & 1]
            for n in branches:
                data[n * size + 12] ^= 0xFF
            open(path, "wb").write(data)
            print(len(branches))
            """
        let planted = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, sandbox.db], timeout: .seconds(30))
        try #require(planted.exited && planted.status == 0 && (Int(planted.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 0,
                     "no branch page damaged: \(planted.stdoutText) \(planted.stderrText)")

        for command in [["state"], ["verify"], ["validate"], ["replay"], ["stats"], ["audit", "--format", "json"], ["rebuild"]] {
            let run = try await sandbox.run(["--db", sandbox.db, "--now", Day.dec2] + command)
            #expect(run.status == ExitCode.failure, "\(command): \(run)")
            #expect(!looksLikeACrash(run.stderr), "\(command): \(run)")
            #expect(run.stderrLines.last?.hasPrefix("cachelog: ") == true, "\(command): \(run)")
            #expect(run.stderrLines.last?.contains("is damaged: page ") == true, "\(command): \(run)")
            #expect(run.stderrLines.last?.contains("restore the database directory from a backup") == true, "\(command): \(run)")
            if command.contains("json") {
                #expect(run.stdout.isEmpty || (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) != nil, "\(command): \(run)")
            }
        }
    }

    /// A data.mdb that is a FIFO made a reader's open wait for a writer for ever, and one that is
    /// a directory was called a truncated file: each is no database, said in one line, exit 1,
    /// to a reader and to a writer alike.
    @Test(arguments: ["a FIFO", "a directory"])
    func aDataFileThatIsNoFile_isNoDatabase_forAReaderAndAWriter_inOneLine(kind: String) async throws {
        let sandbox = try Sandbox()
        try FileManager.default.createDirectory(atPath: sandbox.db, withIntermediateDirectories: true)
        let data = sandbox.db + "/data.mdb"
        if kind == "a FIFO" {
            try #require(mkfifo(data, 0o600) == 0, "mkfifo failed: errno \(errno)")
        } else {
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
        }
        for command in [["state"], ["verify"], ["load", sandbox.url("/films.json"), "--key", "films", "--contract", "films"]] {
            let run = try await sandbox.run(["--db", sandbox.db, "--now", Day.dec1] + command, timeout: .seconds(120))
            #expect(run.status == ExitCode.failure, "\(command): \(run)")
            #expect(run.stderrLines == ["cachelog: \(sandbox.db) is not a CacheLog database (its data.mdb is \(kind), not a file)"], "\(command): \(run)")
            #expect(run.stdout.isEmpty, "\(command): \(run)")
        }
    }

    /// LMDB takes a table's flags from its catalog entry unchecked: with one bit flipped there
    /// (integer keys) every lookup of the events table missed, a save was reported cached and
    /// could not be read back, and `verify` said clean. The open refuses such a table, as damage.
    @Test
    func aFlagFlippedInTheCatalogEntryOfTheEventsTable_isRefusedAtOpen_inOneLine() async throws {
        let sandbox = try Sandbox()
        try #require(try await load(sandbox, at: Day.dec1).status == ExitCode.ok)
        // lmdb.h's MDB_meta: the main table's root page at byte 128 of the meta page with the
        // higher txnid (byte 144); its leaf lists the named tables, each an MDB_db whose flags
        // are the u16 at byte 4.
        let script = """
            import struct, sys
            path = sys.argv[1] + "/data.mdb"
            data = bytearray(open(path, "rb").read())
            size = struct.unpack_from("<I", data, 40)[0]
            meta = max((0, 1), key=lambda m: struct.unpack_from("<Q", data, m * size + 144)[0])
            page = struct.unpack_from("<Q", data, meta * size + 128)[0] * size
            for i in range((struct.unpack_from("<H", data, page + 12)[0] - 16) // 2):
                node = page + struct.unpack_from("<H", data, page + 16 + 2 * i)[0]
                length = struct.unpack_from("<H", data, node + 6)[0]
                if data[node + 8:node + 8 + length] == b"events":
                    data[node + 8 + length + 4] |= 0x08
                    print("flipped")
            open(path, "wb").write(data)
            """
        let planted = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, sandbox.db], timeout: .seconds(30))
        try #require(planted.exited && planted.status == 0 && planted.stdoutText == "flipped\n", "\(planted.stdoutText) \(planted.stderrText)")

        for command in [["verify"], ["state"], ["load", sandbox.url("/films.json"), "--key", "films", "--contract", "films"]] {
            let run = try await sandbox.run(["--db", sandbox.db, "--now", Day.dec2] + command)
            #expect(run.status == ExitCode.failure && run.stderrLines.count == 1 && run.stdout.isEmpty, "\(command): \(run)")
            #expect(run.stderrLines.first?.hasPrefix("cachelog: \(sandbox.db)/data.mdb is damaged: page ") == true, "\(command): \(run)")
            #expect(run.stderrLines.first?.contains("holds the catalog entry of the events table with flags 8, where CacheLog gives it 0") == true,
                    "\(command): \(run)")
        }
    }

    // MARK: defect 1: a reference only ever targets a record that passes its checksum

    @Test
    func load_afterTheLivePutsChecksumIsDamaged_storesAFreshCopy_andTheCacheServesOfflineAgain() async throws {
        let sandbox = try Sandbox()
        try #require(try await load(sandbox, at: Day.dec1).status == ExitCode.ok)
        let planting = Planting(db: sandbox.db)
        try await planting.flipByte(ofRecord: 2, offsetFromEnd: 1) // the put's stored CRC

        // The unchanged feed, loaded three more times: seqs 4, 6 and 8 are its puts.
        for day in [Day.dec2, Day.dec3, Day.dec4] {
            let loaded = try await load(sandbox, at: day)
            #expect(loaded.status == ExitCode.ok, "\(loaded)")
        }
        for put: UInt64 in [4, 6, 8] {
            let source = try #require(try await planting.payloadSeq(ofPut: put))
            #expect(source != 2, "the put at seq \(put) refers to the damaged record")
        }
        #expect(try await planting.payloadSeq(ofPut: 4) == 4, "the first save after the damage stores a fresh copy")

        // The remote fails: the cache serves the feed, for good.
        let offline = try await load(sandbox, at: "2026-12-05T10:00:00Z", url: try deadURL())
        #expect(offline.status == ExitCode.ok, "\(offline)")
        #expect(try offline.json().string("source") == "cache")

        // verify names the damaged record, and only it.
        let (status, problems) = try await verifyProblems(sandbox)
        #expect(status == ExitCode.failure)
        #expect(problems.compactMap { $0.int("seq") } == [2], "\(problems)")
        #expect(problems.first?["fixedByRebuild"] as? Bool == false, "a damaged record is not derived data")
    }

    // MARK: defect 6: every missing seq is a problem, wherever it is

    @Test(arguments: [UInt64(1), 2, 3])
    func verify_namesAMissingRecord_atTheStartInTheMiddleOrBeforeTheLive(seq: UInt64) async throws {
        let sandbox = try Sandbox()
        try #require(try await load(sandbox, at: Day.dec1).status == ExitCode.ok)
        try #require(try await load(sandbox, at: Day.dec2, url: sandbox.url("/newer-films.json")).status == ExitCode.ok)
        try await Planting(db: sandbox.db).deleteRecord(seq)

        let (status, problems) = try await verifyProblems(sandbox)
        #expect(status == ExitCode.failure)
        #expect(problems.map { $0.int("seq") } == [Int(seq)], "\(problems)")
        #expect(problems.first?.string("message")?.contains("missing") == true, "\(problems)")
    }

    @Test
    func verify_namesTheMissingLastRecord() async throws {
        let sandbox = try Sandbox()
        try #require(try await load(sandbox, at: Day.dec1).status == ExitCode.ok)
        try #require(try await load(sandbox, at: Day.dec2, url: sandbox.url("/newer-films.json")).status == ExitCode.ok)
        try await Planting(db: sandbox.db).deleteRecord(4)

        let (status, problems) = try await verifyProblems(sandbox)
        #expect(status == ExitCode.failure)
        #expect(problems.contains { $0.int("seq") == 4 && $0.string("message")?.contains("missing") == true }, "\(problems)")
    }

    @Test
    func verify_afterCompaction_namesAMissingRecordRightAfterTheBase_andAMissingKeptRecord() async throws {
        let sandbox = try Sandbox()
        // Four saves of the same feed: the puts at 4, 6 and 8 refer to the bytes at seq 2.
        for day in [Day.dec1, Day.dec2, Day.dec3, Day.dec4] {
            try #require(try await load(sandbox, at: day).status == ExitCode.ok)
        }
        let compacted = try await sandbox.cachelog("--now", Day.dec4, "compact", "--before", "5")
        try #require(compacted.status == ExitCode.ok, "\(compacted)")
        try #require(try await verifyProblems(sandbox).status == ExitCode.ok)

        let planting = Planting(db: sandbox.db)
        try await planting.deleteRecord(5)
        var (status, problems) = try await verifyProblems(sandbox)
        #expect(status == ExitCode.failure)
        #expect(problems.map { $0.int("seq") } == [5], "\(problems)")

        try await planting.deleteRecord(2)
        (status, problems) = try await verifyProblems(sandbox)
        #expect(status == ExitCode.failure)
        #expect(problems.compactMap { $0.int("seq") }.sorted() == [2, 5], "one problem per missing record: \(problems)")
    }

    // MARK: defect 8: a damaged state row or checkpoint blocks nothing, and rebuild repairs it

    @Test
    func aDamagedStateRow_blocksNeitherStateNorValidateNorCompact_verifyNamesIt_andRebuildRepairsIt() async throws {
        let sandbox = try Sandbox()
        try #require(try await load(sandbox, at: Day.dec1).status == ExitCode.ok)
        try #require(try await load(sandbox, at: Day.dec2, key: "genres", contract: "genres").status == ExitCode.ok)
        let before = try await sandbox.cachelog("state", "--format", "json")
        try await Planting(db: sandbox.db).damageStateRow("films")

        let state = try await sandbox.cachelog("state", "--format", "json")
        #expect(state.status == ExitCode.ok, "\(state)")
        #expect(state.stdout == before.stdout, "state answers from the log as before the damage")

        let (status, problems) = try await verifyProblems(sandbox)
        #expect(status == ExitCode.failure)
        #expect(problems.count == 1 && problems.first?.string("message")?.contains("\"films\"") == true, "\(problems)")
        #expect(problems.first?["fixedByRebuild"] as? Bool == true)
        let text = try await sandbox.cachelog("verify")
        #expect(text.stdoutLines.last?.hasSuffix("; 'cachelog rebuild' repairs it") == true, "\(text)")

        let validated = try await sandbox.cachelog("--now", Day.dec3, "validate", "--format", "json")
        #expect(validated.status == ExitCode.ok, "\(validated)")
        #expect(try validated.jsonArray().map { "\($0.string("key") ?? "?") \($0.string("outcome") ?? "?")" } == ["films fresh", "genres fresh"])

        let offline = try await load(sandbox, at: Day.dec3, url: try deadURL())
        #expect(offline.status == ExitCode.ok, "the cache still serves the damaged row's key: \(offline)")

        let rebuilt = try await sandbox.cachelog("rebuild", "--format", "json")
        #expect(rebuilt.status == ExitCode.ok, "\(rebuilt)")
        #expect(try rebuilt.json()["repairedKeys"] as? [String] == ["films"])
        #expect(try await verifyProblems(sandbox).status == ExitCode.ok)
        let again = try await sandbox.cachelog("rebuild", "--format", "json")
        #expect(try again.json()["repairedKeys"] as? [String] == [], "a second rebuild finds nothing to repair")
    }

    @Test
    func aDamagedStateRow_isAnsweredFromTheLog_whileWholeRowsStand_evenWhenAPutsKeyIsDamagedToo() async throws {
        let sandbox = try Sandbox()
        try #require(try await load(sandbox, at: Day.dec1).status == ExitCode.ok)
        try #require(try await load(sandbox, at: Day.dec2, key: "genres", contract: "genres").status == ExitCode.ok)
        let planting = Planting(db: sandbox.db)
        // films' put (seq 2) now names "gilms" to a fold that reads its framing; its row is whole.
        try await planting.python("""
            record = bytearray(txn.get(seq(2), db=events))
            record[38] ^= 0x01
            txn.put(seq(2), bytes(record), db=events)
            """)
        try await planting.damageStateRow("genres")

        let state = try await sandbox.cachelog("state", "--format", "json")
        let validated = try await sandbox.cachelog("--now", Day.dec3, "validate", "--dry-run", "--format", "json")

        #expect(state.status == ExitCode.ok, "\(state)")
        #expect((try state.json()["entries"] as? [[String: Any]])?.compactMap { $0.string("key") } == ["films", "genres"])
        #expect(try validated.jsonArray().compactMap { $0.string("key") } == ["films", "genres"])
    }

    @Test
    func validate_goesOnWithEveryKey_whenOneStateRowIsDamaged_andExpiresThemAll() async throws {
        let sandbox = try Sandbox()
        try #require(try await load(sandbox, at: Day.dec1).status == ExitCode.ok)
        try #require(try await load(sandbox, at: Day.dec1, key: "genres", contract: "genres").status == ExitCode.ok)
        try await Planting(db: sandbox.db).damageStateRow("films")

        let validated = try await sandbox.cachelog("--now", Day.dec9, "validate", "--format", "json")
        #expect(validated.status == ExitCode.ok, "\(validated)")
        #expect(try validated.jsonArray().map { "\($0.string("key") ?? "?") \($0.string("outcome") ?? "?")" } == ["films expired", "genres expired"])
        let state = try await sandbox.cachelog("state", "--format", "json")
        #expect((try state.json()["entries"] as? [Any])?.isEmpty == true, "\(state)")
        #expect(try await verifyProblems(sandbox).status == ExitCode.ok, "the expire removed the damaged row")
    }

    @Test
    func aDamagedCheckpoint_blocksNeitherStateAsOfNorCompact_verifyNamesIt_andRebuildRewritesIt() async throws {
        let sandbox = try Sandbox()
        let writer = try await ChildProcess.run(try builtProduct("cachelog-writer"), [sandbox.db, "24", "--batch", "--checkpoint-interval", "4"])
        try #require(writer.exited && writer.status == 0, "\(writer.stderrText)")
        let planting = Planting(db: sandbox.db)
        let checkpoints = try await planting.checkpointSeqs()
        try #require(checkpoints.count >= 4, "\(checkpoints)")
        let damaged = checkpoints[checkpoints.count / 2]
        let asOf = String(damaged + 1)
        let expected = try await sandbox.cachelog("state", "--as-of", asOf, "--format", "json")
        try #require(expected.status == ExitCode.ok)

        try await planting.damageCheckpoint(damaged)
        let state = try await sandbox.cachelog("state", "--as-of", asOf, "--format", "json")
        #expect(state.status == ExitCode.ok, "\(state)")
        #expect(state.stdout == expected.stdout)

        let (status, problems) = try await verifyProblems(sandbox)
        #expect(status == ExitCode.failure)
        #expect(problems.map { $0.int("seq") } == [Int(damaged)], "\(problems)")

        let rebuilt = try await sandbox.cachelog("rebuild", "--format", "json")
        #expect(rebuilt.status == ExitCode.ok, "\(rebuilt)")
        #expect(try rebuilt.json().int("checkpointsRewritten") == 1)
        #expect(try await verifyProblems(sandbox).status == ExitCode.ok)

        try await planting.damageCheckpoint(damaged)
        let compacted = try await sandbox.cachelog("compact", "--before", String(damaged + 2))
        #expect(compacted.status == ExitCode.ok, "\(compacted)")
        #expect(try await verifyProblems(sandbox).status == ExitCode.ok, "the damaged checkpoint was compacted away")
    }

    @Test
    func aPutWhoseKeyDamageMadeNonUTF8_isACorruptRecord_thatCompactionAndRebuildGetPast() async throws {
        let sandbox = try Sandbox()
        // 511 bytes, LMDB's longest key: any byte that a String would replace grows it past the limit.
        let key = "k" + String(repeating: "x", count: 510)
        try #require(try await load(sandbox, at: Day.dec1, key: key).status == ExitCode.ok)
        try #require(try await load(sandbox, at: Day.dec2, key: "genres", contract: "genres").status == ExitCode.ok)
        // The put at seq 2 gets a key byte that is not UTF-8 (0x78 ^ 0xFF = 0x87, a lone continuation byte).
        let planting = Planting(db: sandbox.db)
        try await planting.python("""
            record = bytearray(txn.get(seq(2), db=events))
            record[38 + 100] ^= 0xFF
            txn.put(seq(2), bytes(record), db=events)
            """)
        let replayed = try await sandbox.cachelog("replay", "--format", "jsonl")
        #expect(try replayed.jsonLines().first { $0.int("seq") == 2 }?.string("type") == "corrupt", "\(replayed)")
        let (status, problems) = try await verifyProblems(sandbox)
        #expect(status == ExitCode.failure)
        #expect(problems.compactMap { $0.int("seq") }.contains(2), "the damaged record: \(problems)")

        let compacted = try await sandbox.cachelog("compact", "--before", "4")
        #expect(compacted.status == ExitCode.ok, "\(compacted)")

        let rebuilt = try await sandbox.cachelog("rebuild", "--format", "json")
        #expect(rebuilt.status == ExitCode.ok, "\(rebuilt)")
        #expect(!looksLikeACrash(rebuilt.stderr))
        let keys = try await planting.python("print(sorted(key.decode() for key, _ in txn.cursor(db=state)))")
        #expect(keys == "['genres']\n", "the damaged put is not folded: its key is gone, no other appears: \(keys)")
        let after = try await verifyProblems(sandbox)
        #expect(after.problems.allSatisfy { $0.int("seq") == 2 }, "at most the damaged record, if compaction kept it: \(after.problems)")
    }

    // MARK: damaged counters: never a trap, and rebuild restores them from the log

    @Test(arguments: [UInt64.max, UInt64.max - 1, UInt64(1) << 62 + 1])
    func anImpossibleLastSeq_isAnErrorNotATrap_andRebuildRestoresItFromTheLog(lastSeq: UInt64) async throws {
        let sandbox = try Sandbox()
        try #require(try await load(sandbox, at: Day.dec1).status == ExitCode.ok)
        try await Planting(db: sandbox.db).setMeta("lastSeq", lastSeq)

        let (status, problems) = try await verifyProblems(sandbox)
        #expect(status == ExitCode.failure)
        #expect(problems.count == 1 && problems.first?["fixedByRebuild"] as? Bool == true, "\(problems)")
        for command in [["load", sandbox.url("/films.json"), "--key", "other", "--contract", "films"], ["compact", "--before", "2"], ["state"], ["replay"]] {
            let result = try await sandbox.run(["--db", sandbox.db] + command)
            #expect(result.status == ExitCode.failure, "\(command): \(result)")
            #expect(result.stderr.contains("counters are damaged"), "\(command): \(result)")
        }
        let rebuilt = try await sandbox.cachelog("rebuild", "--format", "json")
        #expect(try rebuilt.json()["restoredCounters"] as? [String] == ["lastSeq"], "\(rebuilt)")
        #expect(try await verifyProblems(sandbox).status == ExitCode.ok)
        #expect(try await load(sandbox, at: Day.dec2).status == ExitCode.ok)
    }

    @Test
    func countersBehindTheLog_refuseToOverwriteIt_andRebuildFoldsTheWholeLog() async throws {
        let sandbox = try Sandbox()
        try #require(try await load(sandbox, at: Day.dec1).status == ExitCode.ok)
        try #require(try await load(sandbox, at: Day.dec1, key: "genres", contract: "genres").status == ExitCode.ok)
        let planting = Planting(db: sandbox.db)
        try await planting.setMeta("lastSeq", 2)
        try await planting.setMeta("checkpointSeq", 255)
        try await planting.setMeta("lastRecordedAt", Double.infinity.bitPattern)

        let refused = try await load(sandbox, at: Day.dec2)
        #expect(refused.status == ExitCode.failure, "\(refused)")
        #expect(try refused.json()["cached"] as? Bool == false, "\(refused)")
        let rebuilt = try await sandbox.cachelog("rebuild", "--format", "json")
        #expect(try rebuilt.json().int("events") == 4, "\(rebuilt)")
        #expect(try rebuilt.json()["restoredCounters"] as? [String] == ["lastSeq", "lastRecordedAt", "checkpointSeq"], "\(rebuilt)")
        #expect(try await verifyProblems(sandbox).status == ExitCode.ok)

        #expect(try await load(sandbox, at: Day.dec2).status == ExitCode.ok)
        let replay = try await sandbox.cachelog("replay", "--format", "jsonl")
        #expect(try replay.jsonLines().map { $0.string("at") } == [Day.dec1, Day.dec1, Day.dec1, Day.dec1, Day.dec2, Day.dec2])
    }

    // MARK: defect 9: a truncated data file is refused with one line, never a SIGBUS

    @Test(arguments: [0.5, 0.0001, 0])
    func everyCommand_onATruncatedDataFile_refusesWithOneLine_andExitsOne(fraction: Double) async throws {
        let sandbox = try Sandbox()
        for day in [Day.dec1, Day.dec2] {
            try #require(try await load(sandbox, at: day, url: sandbox.url(day == Day.dec1 ? "/films.json" : "/newer-films.json")).status == ExitCode.ok)
        }
        // Cut into the pages in use: the file also holds zeros written ahead of them.
        let used = try #require(try await sandbox.cachelog("stats", "--format", "json").json().int("mapUsed"))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: sandbox.db + "/data.mdb"))
        try handle.truncate(atOffset: UInt64(Double(used) * fraction))
        try handle.close()

        let commands: [[String]] = [
            ["state"], ["state", "--as-of", "1"], ["replay"], ["replay", "--format", "jsonl"], ["audit", "--key", "films"],
            ["stats"], ["verify"], ["validate"], ["validate", "--dry-run"], ["rebuild"], ["compact", "--before", "2"],
            ["load", sandbox.url("/films.json"), "--key", "films", "--contract", "films"],
        ]
        for command in commands {
            let result = try await sandbox.run(["--db", sandbox.db] + command)
            #expect(result.status == ExitCode.failure, "\(command): \(result)")
            #expect(result.stdout.isEmpty, "\(command): \(result)")
            #expect(result.stderrLines.count == 1 && result.stderr.contains("truncated"), "\(command): \(result)")
        }
    }
}
