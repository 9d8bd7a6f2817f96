import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// Two `cachelog load` processes of one key whose clocks disagree (`--now` days or a minute
/// apart, or the real clock against a `--now` ahead of it): the load whose request began first,
/// and lands last, does not replace the cache the other saved meanwhile. Which of the two is newer
/// is the log's order (how far the log had got when each request began), not what either clock
/// says: the clocks only stamp the caches, for their ages.
///
/// The cases run one at a time, and the first load's request may wait as long as the test may
/// run: on a loaded machine the second process can take a while, and a request cut short by
/// the tool's 60-second default would test nothing.
@Suite("cachelog load: the first-begun load lands last, clocks apart", .serialized, .hangGuard)
struct SupersededSaveTests {
    /// The two processes' clocks: a `--now`, or nil for the real clock.
    struct Clocks: Sendable, CustomTestStringConvertible {
        var first: String?
        var second: String?
        var testDescription: String
    }

    static let clocks = [
        Clocks(first: "2026-12-03T10:00:00Z", second: "2026-12-01T10:00:00Z", testDescription: "the second's clock two days behind"),
        Clocks(first: "2026-12-01T10:00:00Z", second: "2026-12-03T10:00:00Z", testDescription: "the second's clock two days ahead"),
        Clocks(first: "2026-12-01T10:01:00Z", second: "2026-12-01T10:00:00Z", testDescription: "the second's clock a minute behind"),
        Clocks(first: "2026-12-01T10:00:00Z", second: "2026-12-01T10:01:00Z", testDescription: "the second's clock a minute ahead"),
        Clocks(first: nil, second: "2099-01-01T00:00:00Z", testDescription: "the real clock, then a --now ahead of it"),
        Clocks(first: "2099-01-01T00:00:00Z", second: nil, testDescription: "a --now ahead, then the real clock"),
    ]

    @Test(arguments: clocks)
    func theLoadWhoseRequestBeganFirst_andLandsLast_isNotCached_andTheOtherLoadsCacheStays(_ clocks: Clocks) async throws {
        let answer = Gate()
        defer { answer.open() }
        let sandbox = try Sandbox(serving: { request in
            // The first load's request waits here until the second load has saved its feed.
            if request.path == "/slow.json" {
                answer.wait(timeout: 300)
                return .json(Feeds.films)
            }
            return .json(Feeds.newerFilms)
        })
        func load(_ now: String?, _ path: String) -> [String] {
            ["--db", sandbox.db] + (now.map { ["--now", $0] } ?? [])
                + ["load", sandbox.url(path), "--key", "films", "--contract", "films", "--format", "json", "--timeout", "300"]
        }

        let first = try ChildProcess(sandbox.executable, load(clocks.first, "/slow.json"), environment: sandbox.environment())
        try #require(await sandbox.server.waitForRequests(count: 1), "the first load never asked")
        let second = try await sandbox.run(load(clocks.second, "/films.json"), timeout: .seconds(240))
        answer.open()
        let ended = await first.finish(timeout: .seconds(240))
        let refused = CLIResult(status: ended.status, stdout: ended.stdoutText, stderr: ended.stderrText)

        #expect(second.status == ExitCode.ok, "\(second)")
        let saved = try second.json()
        #expect(saved["cached"] as? Bool == true)
        #expect((saved["items"] as? [Any])?.count == 3)
        let savedAt = try #require(saved.string("timestamp"))

        // What a save that is not made prints today: the items, not as cached, and why, exit 1.
        #expect(ended.exited && refused.status == ExitCode.failure, "\(refused)")
        let json = try refused.json()
        #expect(json["cached"] as? Bool == false, "\(refused.stdout)")
        #expect(json.string("source") == "remote")
        #expect((json["items"] as? [Any])?.count == 2)
        #expect(refused.stderrLines.last?.hasPrefix("cachelog: the items were loaded from the remote but not cached: a newer cache (seq ") == true,
                "\(refused.stderr)")
        // Which save was kept, and why it counts as newer: by the log's order, not the clocks.
        #expect(refused.stderrLines.last?.contains(") was kept: its request began at seq ") == true, "\(refused.stderr)")

        let state = try await sandbox.cachelog("state", "--format", "json")
        #expect(state.status == ExitCode.ok, "\(state)")
        let entries = try #require(try state.json()["entries"] as? [[String: Any]])
        #expect(entries.compactMap { $0.string("key") } == ["films"])
        #expect(entries.first?.string("timestamp") == savedAt, "the second load's cache is the live one")
        let puts = try await sandbox.cachelog("replay", "--type", "put", "--format", "jsonl").jsonLines()
        #expect(puts.count == 1, "the refused save wrote nothing: \(puts)")
    }
}
