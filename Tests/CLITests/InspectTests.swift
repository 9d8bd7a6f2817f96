import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// state, audit, validate, stats, verify and compact over histories written by real commands.
@Suite("cachelog state, audit, validate, stats, verify, compact", .hangGuard)
struct InspectTests {
    // MARK: state

    @Test
    func state_now_asOfASeq_andForOneKey() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()

        let now = try await sandbox.cachelog("state", "--format", "json")
        #expect(now.status == ExitCode.ok, "\(now)")
        #expect(try now.json().int("seq") == 8)
        #expect((try now.json()["entries"] as? [Any])?.count == 0)

        let atSix = try await sandbox.cachelog("state", "--as-of", "6", "--format", "json")
        let entries = try #require(try atSix.json()["entries"] as? [[String: Any]])
        #expect(try atSix.json().int("seq") == 6)
        #expect(entries.compactMap { $0.string("key") } == ["films", "genres"])
        #expect(entries.compactMap { $0.int("seq") } == [6, 4])
        #expect(entries.compactMap { $0.string("timestamp") } == [Day.dec3, Day.dec2])

        let oneKey = try await sandbox.cachelog("state", "--as-of", "6", "--key", "genres", "--format", "json")
        #expect((try oneKey.json()["entries"] as? [[String: Any]])?.compactMap { $0.string("key") } == ["genres"])
    }

    @Test
    func state_text_showsEachEntryWithItsAgeAtTheDateAsked() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let result = try await sandbox.cachelog("state", "--as-of", "2026-12-05T10:00:00Z", "--key", "films")
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stdoutLines.count == 3)
        #expect(result.stdoutLines.first == "as of seq 6: 1 live entry")
        #expect(result.stdoutLines.last?.hasPrefix("films                 2026-12-03T10:00:00Z  2d ") == true)

        let empty = try await sandbox.cachelog("state")
        #expect(empty.stdoutLines == ["as of seq 8: 0 live entries"])
    }

    /// A seq not written yet is an error, as git's unknown revision is (it answered "as of seq 8");
    /// the last seq, and a date after the last event, are the state at the end.
    @Test
    func state_asOfASeqPastTheEndOfTheLog_saysWhereTheLogEnds_exitOne() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        for arguments in [["state", "--as-of", "99"], ["state", "--as-of", "9", "--key", "films", "--format", "json"]] {
            let result = try await sandbox.run(["--db", sandbox.db] + arguments)
            #expect(result.status == ExitCode.failure, "\(arguments): \(result)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result)")
            #expect(result.stderrLines == ["cachelog: no seq \(arguments[2]): the log ends at seq 8"], "\(arguments): \(result)")
        }
        for asOf in ["8", "2030-01-01"] {
            let end = try await sandbox.cachelog("state", "--as-of", asOf, "--format", "json")
            #expect(try end.status == ExitCode.ok && end.json().int("seq") == 8, "\(asOf): \(end)")
        }
    }

    // MARK: audit

    @Test
    func audit_json_timelineShowsWrittenStaleExpiredAndGap() async throws {
        let sandbox = try Sandbox()
        let feed = sandbox.url("/films.json")
        _ = try await sandbox.cachelog("--now", Day.dec1, "load", feed, "--key", "films", "--contract", "films")
        _ = try await sandbox.cachelog("--now", Day.dec9, "validate")
        _ = try await sandbox.cachelog("--now", Day.dec10, "load", feed, "--key", "films", "--contract", "films")

        let result = try await sandbox.cachelog("--now", Day.dec10, "audit", "--format", "json")
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stderr.isEmpty)
        let json = try result.json()
        #expect(json["maxAge"] is NSNull, "no --max-age: each version is judged by its recorded policy")
        #expect((json["corruptSeqs"] as? [Any])?.isEmpty == true)
        let keys = try #require(json["keys"] as? [[String: Any]])
        #expect(keys.compactMap { $0.string("key") } == ["films"])
        let timeline = try #require(keys.first?["timeline"] as? [[String: Any]])
        #expect(timeline.compactMap { $0.string("kind") } == ["written", "stale", "expired", "gap", "written"])
        #expect(timeline.compactMap { $0.string("at") } == [Day.dec1, Day.dec8, Day.dec9, Day.dec9, Day.dec10])
        #expect(timeline.map { $0["seq"] as? Int } == [2, 2, 3, nil, 5])
        #expect(timeline[3].string("text") == "no cache for 1d")
        #expect(timeline.allSatisfy { !($0.string("text") ?? "").isEmpty })
    }

    @Test
    func audit_text_underAShorterMaxAge_saysWhenEachVersionWentStale() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let result = try await sandbox.cachelog("--now", Day.dec10, "audit", "--key", "genres", "--max-age", "1d")
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stdoutLines.first == "genres")
        #expect(result.stdoutLines.contains { $0.contains("2026-12-03T10:00:00Z") && $0.contains("stale") && $0.contains("max age 1d") })
        #expect(result.stdoutLines.contains { $0.contains("expired") && $0.contains("seq 8") })

        let none = try await sandbox.cachelog("audit", "--key", "nothing-here")
        #expect(none.stdoutLines == ["no events for nothing-here"])
    }

    // MARK: validate

    @Test
    func validate_freshCacheIsLeftAlone_oldCacheIsExpired_json() async throws {
        let sandbox = try Sandbox()
        _ = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        _ = try await sandbox.cachelog("--now", Day.dec3, "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres")

        let result = try await sandbox.cachelog("--now", Day.dec9, "validate", "--format", "json")
        #expect(result.status == ExitCode.ok, "\(result)")
        let outcomes = try result.jsonArray()
        #expect(outcomes.compactMap { $0.string("key") } == ["films", "genres"])
        #expect(outcomes.compactMap { $0.string("outcome") } == ["expired", "fresh"])

        let replay = try await sandbox.cachelog("replay", "--format", "jsonl", "--type", "expire")
        #expect(try replay.jsonLines().compactMap { $0.string("key") } == ["films"])

        let again = try await sandbox.cachelog("--now", Day.dec9, "validate", "--key", "films")
        #expect(again.stdoutLines == ["films: empty (no cache)"])
    }

    @Test
    func validate_onAMissingDatabase_saysNothingToValidate_exitsZero_andCreatesNothing() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.cachelog("validate")
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stdoutLines == ["nothing to validate: no database at \(sandbox.db) yet"])
        #expect(result.stderr.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: sandbox.db))
        let json = try await sandbox.cachelog("validate", "--format", "json")
        #expect(json.status == ExitCode.ok && json.stdout == "[]\n", "\(json)")
        let quiet = try await sandbox.cachelog("--quiet", "validate")
        #expect(quiet.status == ExitCode.ok && quiet.stdout.isEmpty, "\(quiet)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.db))
    }

    // MARK: stats

    @Test
    func stats_json_countsEventsByTypeAndKey_andSizes() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let result = try await sandbox.cachelog("stats", "--format", "json")
        #expect(result.status == ExitCode.ok, "\(result)")
        let stats = try result.json()
        let events = try #require(stats["events"] as? [String: Any])
        #expect(events.int("put") == 3 && events.int("delete") == 3 && events.int("expire") == 2 && events.int("total") == 8)
        let keys = try #require(stats["keys"] as? [String: [String: Any]])
        #expect(keys["films"]?.int("put") == 2 && keys["films"]?.int("delete") == 2 && keys["films"]?.int("expire") == 1)
        #expect(keys["genres"]?.int("total") == 3)
        #expect(stats.int("liveKeys") == 0)
        #expect(stats.int("corruptRecords") == 0)
        #expect(stats.int("firstSeq") == 1 && stats.int("lastSeq") == 8)
        #expect(stats.string("firstAt") == Day.dec1 && stats.string("lastAt") == Day.dec10)

        let replay = try await sandbox.cachelog("replay", "--format", "jsonl")
        let lines = try replay.jsonLines()
        #expect(stats.int("payloadBytes") == lines.compactMap { $0.int("bytes") }.reduce(0, +))
        #expect(stats.int("storedBytes") == lines.compactMap { $0.int("storedBytes") }.reduce(0, +))
        #expect((stats.int("mapUsed") ?? 0) > 0 && (stats.int("mapUsed") ?? 0) <= (stats.int("mapSize") ?? 0))
        #expect(stats.double("compressionRatio") != nil)
    }

    @Test
    func stats_text_summarisesAndListsEachKey() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let result = try await sandbox.cachelog("stats")
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stdoutLines.first == "events      8 (put 3, delete 3, expire 2)")
        #expect(result.stdoutLines.contains("seqs        1 … 8"))
        #expect(result.stdoutLines.contains("live keys   0"))
        #expect(result.stdoutLines.contains { $0.hasPrefix("films") && $0.hasSuffix("2       2       1") })
        #expect(result.stdoutLines.contains { $0.hasPrefix("genres") && $0.hasSuffix("1       1       1") })
    }

    // MARK: verify

    @Test
    func verify_cleanDatabase_exitsZero_textAndJSON() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let text = try await sandbox.cachelog("verify")
        #expect(text.status == ExitCode.ok, "\(text)")
        #expect(text.stderr.isEmpty)
        #expect(text.stdoutLines.count == 1)
        #expect(text.stdout.hasPrefix("ok: 8 records"))

        let json = try await sandbox.cachelog("verify", "--format", "json")
        #expect(json.status == ExitCode.ok, "\(json)")
        #expect(try json.json()["clean"] as? Bool == true)
        #expect(try json.json().int("records") == 8)
        #expect((try json.json()["problems"] as? [Any])?.isEmpty == true)
    }

    /// Corruption is planted from outside, the way a bad disk would: `data.mdb` is edited with the
    /// tool closed. The test target cannot reach LMDB, and record bodies are compressed, so the
    /// byte to flip is found through what is stored uncompressed: a record is a 38-byte header
    /// (version 3, kind, flags, …, key length at offset 28) followed by its key, all covered by
    /// the record's CRC. A key unique to this test, preceded by a put header whose key length
    /// matches, can only be the put record itself; flipping a bit of its key breaks the checksum
    /// of exactly that record (seq 2: the load appended delete 1 and put 2). Every match is
    /// flipped, in case LMDB left an older copy of the page in the file.
    @Test
    func verify_afterAByteOfARecordIsFlipped_exitsOne_andNamesTheSeq() async throws {
        let sandbox = try Sandbox()
        let key = "corrupt-me-\(UUID().uuidString)"
        let load = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", key, "--contract", "films")
        try #require(load.status == ExitCode.ok, "\(load)")
        let flipped = try flipKeyByte(ofPutRecordsWithKey: key, in: sandbox.db + "/data.mdb")
        try #require(flipped >= 1, "no put record of \(key) found in data.mdb")

        let text = try await sandbox.cachelog("verify")
        #expect(text.status == ExitCode.failure, "\(text)")
        #expect(!looksLikeACrash(text.stderr))
        // The checksum names the record; other checks (the stored state against the fold
        // of the log, which skips the bad record) may name it too, never another seq.
        let problems = text.stdoutLines.dropLast()
        #expect(problems.contains { $0.hasPrefix("problem seq 2: ") && $0.contains("checksum") }, "\(text)")
        #expect(problems.allSatisfy { $0.hasPrefix("problem seq 2: ") }, "\(text)")
        #expect(text.stdoutLines.last?.hasPrefix("\(problems.count) problem") == true, "\(text)")

        let json = try await sandbox.cachelog("verify", "--format", "json")
        #expect(json.status == ExitCode.failure, "\(json)")
        #expect(try json.json()["clean"] as? Bool == false)
        let listed = try #require(try json.json()["problems"] as? [[String: Any]])
        #expect(listed.count == problems.count)
        #expect(listed.allSatisfy { $0.int("seq") == 2 })
        #expect(listed.contains { $0.string("message")?.contains("checksum") == true })

        // The replay names the bad record and goes on; the loader does not serve garbage.
        let replay = try await sandbox.cachelog("replay", "--format", "jsonl")
        #expect(replay.status == ExitCode.ok, "\(replay)")
        let events = try replay.jsonLines()
        #expect(events.compactMap { $0.string("type") } == ["delete", "corrupt"])
        #expect(events.last?.int("seq") == 2)
        #expect(events.last?.string("error")?.isEmpty == false)

        // stats and audit count it and point at verify.
        let stats = try await sandbox.cachelog("stats", "--format", "json")
        #expect(stats.status == ExitCode.ok, "\(stats)")
        #expect(try stats.json().int("corruptRecords") == 1)
        let audit = try await sandbox.cachelog("audit", "--format", "json")
        #expect(audit.status == ExitCode.ok, "\(audit)")
        #expect(try audit.json()["corruptSeqs"] as? [Int] == [2])
    }

    /// Flips the last byte of the key in every put record of `key` in an LMDB data file (see the
    /// test above for why this finds exactly the record). Returns how many it flipped.
    private func flipKeyByte(ofPutRecordsWithKey key: String, in file: String) throws -> Int {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        let needle = [UInt8](key.utf8)
        let headerSize = 38
        var flipped = 0
        var index = headerSize
        while index + needle.count <= bytes.count {
            if bytes[index] == needle[0], Array(bytes[index..<(index + needle.count)]) == needle {
                let header = index - headerSize
                let keyLength = Int(bytes[header + 28]) << 8 | Int(bytes[header + 29])
                if bytes[header] == 3, bytes[header + 1] == 1, keyLength == needle.count {
                    bytes[index + needle.count - 1] ^= 0x01
                    flipped += 1
                }
            }
            index += 1
        }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return flipped
    }

    // MARK: compact

    @Test
    func compact_beforeASeq_printsAReport_keepsTheLivePut_andReplayStartsLater() async throws {
        let sandbox = try Sandbox()
        // A newer feed the second time: an identical payload may be stored once and shared.
        for (now, key, path) in [(Day.dec1, "films", "/films.json"), (Day.dec2, "genres", "/genres.json"), (Day.dec3, "films", "/newer-films.json")] {
            let load = try await sandbox.cachelog("--now", now, "load", sandbox.url(path), "--key", key, "--contract", key)
            try #require(load.status == ExitCode.ok, "\(load)")
        }
        let result = try await sandbox.cachelog("--now", Day.dec3, "compact", "--before", "5")
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stderr.isEmpty)
        #expect(result.stdoutLines.count == 1)
        // The state at the cut (seq 4) uses the films put at 2 and the genres put at 4: both stay,
        // so "as of" any later point still knows their policy.
        #expect(result.stdout.hasPrefix("removed 2 events ("))
        #expect(result.stdout.contains(" bytes); kept 2 earlier still in use; history now starts after seq "))

        let replay = try await sandbox.cachelog("replay", "--format", "jsonl")
        #expect(try replay.jsonLines().compactMap { $0.int("seq") } == [2, 4, 5, 6])
        let state = try await sandbox.cachelog("state", "--format", "json")
        #expect((try state.json()["entries"] as? [[String: Any]])?.compactMap { $0.int("seq") } == [6, 4])
        let verify = try await sandbox.cachelog("verify")
        #expect(verify.status == ExitCode.ok, "\(verify)")

        // The live caches still serve, payloads intact.
        let payloads = try await sandbox.cachelog("replay", "--payload", "--type", "put", "--format", "jsonl")
        #expect(try payloads.jsonLines().map { ($0["payload"] as? [Any])?.count } == [2, 3, 3])
        let before = try await sandbox.cachelog("--now", Day.dec3, "compact", "--before", "5")
        #expect(before.stdout.hasPrefix("removed 0 events (0 bytes);"), "\(before)")
    }

    @Test
    func compact_beforeADate_removesWhatWasRecordedEarlier() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let result = try await sandbox.cachelog("--now", Day.dec10, "compact", "--before", Day.dec3)
        #expect(result.status == ExitCode.ok, "\(result)")
        // The films put (seq 2) and the genres put (seq 4) make the state at the cut, and the
        // films put of Dec 3 (seq 6) refers to the payload of seq 2: both stay, the deletes go.
        #expect(result.stdout.hasPrefix("removed 2 events (") && result.stdout.contains("bytes); kept 2 earlier still in use"), "\(result)")
        let replay = try await sandbox.cachelog("replay", "--payload", "--format", "jsonl")
        #expect(try replay.jsonLines().compactMap { $0.int("seq") } == [2, 4, 5, 6, 7, 8])
        #expect(try replay.jsonLines().allSatisfy { $0.string("type") != "corrupt" })
        let stats = try await sandbox.cachelog("stats", "--format", "json")
        #expect(try stats.json().int("firstSeq") == 2)
        let verify = try await sandbox.cachelog("verify")
        #expect(verify.status == ExitCode.ok, "\(verify)")
    }

    @Test
    func stats_meansByStoredWhatReplayDoes_theBytesOfWholeRecords() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let replay = try await sandbox.cachelog("replay", "--format", "jsonl")
        let stored = try replay.jsonLines().compactMap { $0.int("storedBytes") }.reduce(0, +)
        let stats = try await sandbox.cachelog("stats")
        #expect(stats.status == ExitCode.ok, "\(stats)")
        #expect(stats.stdoutLines.contains("stored      \(stored) bytes in records (headers, keys, compressed payloads, checksums)"), "\(stats)")
        #expect(stats.stdoutLines.contains { $0.hasPrefix("payloads ") && $0.contains("bytes, compressed to ") }, "\(stats)")
        #expect(try await sandbox.cachelog("stats", "--format", "json").json().int("storedBytes") == stored)
    }
}
