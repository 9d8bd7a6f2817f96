import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// `replay` over the history `seedHistory()` writes (see its table).
@Suite("cachelog replay", .hangGuard)
struct ReplayTests {
    private func seqs(_ sandbox: Sandbox, _ arguments: String...) async throws -> [Int] {
        let result = try await sandbox.run(["--db", sandbox.db, "replay", "--format", "jsonl"] + arguments)
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        return try result.jsonLines().compactMap { $0.int("seq") }
    }

    @Test
    func replay_jsonl_eachLineIsAnObject_withTheFieldsOfItsType() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let result = try await sandbox.cachelog("replay", "--format", "jsonl")
        #expect(result.status == ExitCode.ok, "\(result)")
        let events = try result.jsonLines()
        #expect(events.compactMap { $0.int("seq") } == Array(1...8))
        #expect(events.compactMap { $0.string("type") } == ["delete", "put", "delete", "put", "delete", "put", "expire", "expire"])
        #expect(events.compactMap { $0.string("key") } == ["films", "films", "genres", "genres", "films", "films", "films", "genres"])
        #expect(events.compactMap { $0.string("at") } == [Day.dec1, Day.dec1, Day.dec2, Day.dec2, Day.dec3, Day.dec3, Day.dec10, Day.dec10])
        for event in events {
            #expect((event.int("storedBytes") ?? 0) > 0)
            #expect(event["payload"] == nil)
            switch event.string("type") {
            case "put":
                #expect(event.string("timestamp") == event.string("at"))
                #expect((event.int("bytes") ?? 0) > 0)
                #expect(event["reason"] == nil)
                #expect(event.int("maxAge") == 7 * 86_400, "the policy it was saved under")
                #expect(event.string("contract") == event.string("key"), "films and genres, each saved under its own contract")
            case "delete":
                #expect(event.string("reason") == "replaced")
                #expect(event["timestamp"] == nil && event["maxAge"] == nil)
            case "expire":
                #expect(event.int("maxAge") == 7 * 86_400)
                #expect(event.string("timestamp") == (event.string("key") == "films" ? Day.dec3 : Day.dec2))
            default:
                Issue.record("unexpected event \(event)")
            }
        }
    }

    @Test
    func replay_text_isAHeaderAndOneRowPerEvent() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let result = try await sandbox.cachelog("replay")
        #expect(result.status == ExitCode.ok, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.count == 9)
        #expect(lines.first?.contains("SEQ") == true && lines.first?.contains("TYPE") == true)
        #expect(lines[1] == "     1  2026-12-01T10:00:00Z  delete   films                 reason: replaced")
        #expect(lines[2].hasPrefix("     2  2026-12-01T10:00:00Z  put      films                 cached 2026-12-01T10:00:00Z, "))
        #expect(lines[7] == "     7  2026-12-10T10:00:00Z  expire   films                 cached 2026-12-03T10:00:00Z was 7d old or more")
    }

    @Test
    func replay_key_listsOnlyThatKeysEvents() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        #expect(try await seqs(sandbox, "--key", "genres") == [3, 4, 8])
        #expect(try await seqs(sandbox, "--key", "nothing-here") == [])
    }

    @Test
    func replay_typeRepeated_listsEveryTypeAsked() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        #expect(try await seqs(sandbox, "--type", "put") == [2, 4, 6])
        #expect(try await seqs(sandbox, "--type", "put", "--type", "expire") == [2, 4, 6, 7, 8])
        #expect(try await seqs(sandbox, "--type", "expire", "--key", "films") == [7])
    }

    @Test
    func replay_fromAndToSeqs_areInclusive() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        #expect(try await seqs(sandbox, "--from", "3", "--to", "5") == [3, 4, 5])
        #expect(try await seqs(sandbox, "--from", "7") == [7, 8])
        #expect(try await seqs(sandbox, "--to", "2") == [1, 2])
    }

    @Test
    func replay_fromAndToDates_selectByRecordedTime() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        #expect(try await seqs(sandbox, "--from", "2026-12-02", "--to", Day.dec3) == [3, 4, 5, 6])
        #expect(try await seqs(sandbox, "--from", "2026-12-03T10:00:01Z") == [7, 8])
        #expect(try await seqs(sandbox, "--to", "2026-12-01T23:59:59Z") == [1, 2])
    }

    @Test
    func replay_limitAndReverse_giveTheNewestFirst() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        #expect(try await seqs(sandbox, "--limit", "3") == [1, 2, 3])
        #expect(try await seqs(sandbox, "--reverse") == Array((1...8).reversed()))
        #expect(try await seqs(sandbox, "--reverse", "--limit", "2") == [8, 7])
        #expect(try await seqs(sandbox, "--type", "put", "--reverse", "--limit", "2") == [6, 4])
        #expect(try await seqs(sandbox, "--limit", "0") == [])
    }

    @Test
    func replay_payload_addsEachPutsPayloadAsItsJSONValue() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let result = try await sandbox.cachelog("replay", "--format", "jsonl", "--payload", "--key", "genres")
        #expect(result.status == ExitCode.ok, "\(result)")
        let events = try result.jsonLines()
        #expect(events.count == 3)
        let put = try #require(events.first { $0.string("type") == "put" })
        let payload = try #require(put["payload"] as? [[String: Any]], "payload is not the JSON array: \(put)")
        #expect(payload.compactMap { $0.string("name") } == ["Rock", "Jazz", "Folk"])
        #expect(payload.compactMap { $0.int("id") } == [1, 2, 3])
        #expect(events.filter { $0.string("type") != "put" }.allSatisfy { $0["payload"] == nil })

        let text = try await sandbox.cachelog("replay", "--payload", "--key", "genres", "--type", "put")
        #expect(text.status == ExitCode.ok, "\(text)")
        #expect(text.stdoutLines.contains { $0.hasPrefix("        payload: [") && $0.contains("\"Rock\"") })
    }

    @Test
    func replay_follow_printsEventsAnotherProcessAppends_untilTerminated() async throws {
        let sandbox = try Sandbox()
        let first = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        try #require(first.status == ExitCode.ok, "\(first)")

        let follower = try sandbox.start(["--db", sandbox.db, "replay", "--follow", "--format", "jsonl"])
        let history = await follower.waitForLines(2)
        #expect(history.count == 2, "follow printed \(history)")

        let second = try await sandbox.cachelog("--now", Day.dec2, "load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres")
        #expect(second.status == ExitCode.ok, "\(second)")
        let lines = await follower.waitForLines(4)
        #expect(follower.isRunning, "follow stopped by itself")
        await follower.stop()
        #expect(!follower.isRunning)

        try #require(lines.count == 4, "follow printed \(lines)")
        let events = try lines.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(events.compactMap { $0.int("seq") } == [1, 2, 3, 4])
        #expect(events[2].string("key") == "genres" && events[2].string("type") == "delete")
        #expect(events[3].string("key") == "genres" && events[3].string("type") == "put")
        #expect(events[3].string("at") == Day.dec2)
    }

    /// `--follow --to` ends where `--to` does, with exit 0: a seq or a date already in the log
    /// after printing up to it, a seq not yet written once another process appends it, and a
    /// date still ahead once the clock passes it.
    @Test
    func replay_followTo_stopsAtTo_andExitsZero() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        func follow(_ arguments: String...) async throws -> ChildProcess.Result {
            let child = try ChildProcess(sandbox.executable, ["--db", sandbox.db, "replay", "--follow", "--format", "jsonl"] + arguments,
                                         environment: sandbox.environment())
            return await child.finish(timeout: .seconds(10))
        }
        func printed(_ result: ChildProcess.Result) -> [Int] {
            result.stdoutText.split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?.int("seq")
            }
        }

        let toSeq = try await follow("--to", "5")
        let toDay = try await follow("--now", Day.dec10, "--to", "2026-12-02")
        let toDuration = try await follow("--now", Day.dec10, "--key", "films", "--to", "7d")
        for (result, expected) in [(toSeq, [1, 2, 3, 4, 5]), (toDay, [1, 2, 3, 4]), (toDuration, [1, 2, 5, 6])] {
            #expect(result.exited && result.status == ExitCode.ok, "exit \(result.status), timed out: \(result.timedOut) \(result.stderrText)")
            #expect(printed(result) == expected)
        }

        // Seq 10 is not written yet: once the follow has printed seq 8 it is following, and it
        // waits for the load that appends 9 and 10.
        let waiting = try ChildProcess(sandbox.executable, ["--db", sandbox.db, "replay", "--follow", "--from", "8", "--to", "10", "--format", "jsonl"],
                                       environment: sandbox.environment())
        let following = try await eventually(timeout: .seconds(300)) {
            (try? Data(contentsOf: waiting.stdoutFile)).map { $0.contains(UInt8(ascii: "\n")) } ?? false
        }
        try #require(following, "the follow never printed seq 8")
        let load = try await sandbox.cachelog("--now", Day.dec10, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(load.status == ExitCode.ok, "\(load)")
        let appended = await waiting.finish(timeout: .seconds(60))
        #expect(appended.exited && appended.status == ExitCode.ok, "exit \(appended.status), timed out: \(appended.timedOut)")
        #expect(printed(appended) == [8, 9, 10])

        // A date ahead of the clock, on a log whose last event is before it: the follow ends when
        // an event recorded after the date is appended (by another process, at a later --now).
        let later = try ChildProcess(sandbox.executable, ["--db", sandbox.db, "--now", Day.dec10, "replay", "--follow", "--from", "10",
                                                          "--to", "2026-12-11T12:00:00Z", "--format", "jsonl"],
                                     environment: sandbox.environment())
        let followingLater = try await eventually(timeout: .seconds(300)) {
            (try? Data(contentsOf: later.stdoutFile)).map { $0.contains(UInt8(ascii: "\n")) } ?? false
        }
        try #require(followingLater, "the follow never printed seq 10")
        let past = try await sandbox.cachelog("--now", "2026-12-12T00:00:00Z", "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(past.status == ExitCode.ok, "\(past)")
        let ended = await later.finish(timeout: .seconds(60))
        #expect(ended.exited && ended.status == ExitCode.ok, "exit \(ended.status), timed out: \(ended.timedOut)")
        #expect(printed(ended) == [10], "an event recorded after --to ends the follow, unprinted")

        // On the real clock, a date a second ahead: nothing is appended, and the follow ends
        // once the clock has passed it, never before (whatever the machine's load).
        let now = try Sandbox()
        let loaded = try await now.cachelog("load", now.url("/films.json"), "--key", "films", "--contract", "films")
        try #require(loaded.status == ExitCode.ok, "\(loaded)")
        // Whole seconds, as --to reads them: the second after the next one begins.
        let soon = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 1).rounded(.up))
        let ahead = await (try ChildProcess(now.executable, ["--db", now.db, "replay", "--follow", "--to", ISO8601DateFormatter().string(from: soon),
                                                             "--format", "jsonl"],
                                            environment: now.environment())).finish(timeout: .seconds(60))
        #expect(ahead.exited && ahead.status == ExitCode.ok, "exit \(ahead.status), timed out: \(ahead.timedOut)")
        #expect(printed(ahead) == [1, 2])
        #expect(Date() >= soon, "it ended before the clock reached --to")
    }

    @Test
    func replay_followWithReverse_isAUsageError() async throws {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        let result = try await sandbox.cachelog("replay", "--follow", "--reverse")
        #expect(result.status == ExitCode.usage, "\(result)")
        #expect(result.stderr.contains("--follow reads forward"))
    }
}
