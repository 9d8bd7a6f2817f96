import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// Where the output goes can fail: a reader that stops reading (`| head`), a full disk, a closed
/// stdout; and a user may interrupt. The tool never dies by a signal for it, and never exits 0
/// when its results were not written.
@Suite("cachelog when its output cannot be written, or it is interrupted", .hangGuard)
struct OutputFailureTests {
    private func seeded() async throws -> Sandbox {
        let sandbox = try Sandbox()
        try await sandbox.seedHistory()
        return sandbox
    }

    /// Runs `cachelog arguments` through `/bin/sh -c` with `redirection` after it.
    private func shell(_ sandbox: Sandbox, _ arguments: [String], _ redirection: String) async throws -> ChildProcess.Result {
        let command = ([sandbox.executable.path, "--db", sandbox.db] + arguments).map { "'\($0)'" }.joined(separator: " ")
        return try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "exec \(command) \(redirection)"], environment: sandbox.environment(), timeout: .seconds(30))
    }

    @Test
    func aReaderThatStopsReading_endsTheRunWithExitOne_notSIGPIPE() async throws {
        // A megabyte does not fit a pipe's buffer: the writes after `head` has gone meet a closed pipe.
        let big = Data((0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let sandbox = try Sandbox(serving: LoopbackHTTPServer.routes(["/big.bin": HTTPResponse(status: 200, body: big)]))
        let command = "'\(sandbox.executable.path)' --db '\(sandbox.db)' image '\(sandbox.url("/big.bin"))'"

        let result = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"), ["-c", "\(command) | head -c 1 > '\(sandbox.path("head.out"))'; exit ${PIPESTATUS[0]}"],
            environment: sandbox.environment())

        #expect(result.exited && result.status == ExitCode.failure, "exit \(result.status); 141 would be a death by SIGPIPE")
        #expect(result.stderrText.isEmpty, "a reader that went away is no error to report: \(result.stderrText)")
        let cached = try await sandbox.cachelog("image", sandbox.url("/big.bin"), "--format", "json")
        #expect(try cached.json().string("source") == "cache", "the image was cached before it was printed")
    }

    /// A message nobody can read changes nothing: with stderr a pipe whose reader is gone, a
    /// usage error still exits 64 and a save with a warning still saves and exits 0 (both died
    /// by SIGILL when the message's write failed).
    @Test
    func aClosedPipeOnStderr_changesNeitherTheExitCodeNorTheSave() async throws {
        let sandbox = try await seeded()
        func withStderrGone(_ arguments: [String]) async throws -> ChildProcess.Result {
            // stderr is a pipe whose read end is closed before the tool starts, so every write to
            // it meets a closed pipe. SIGPIPE is set back to its default for the tool (Python
            // ignores it, and an ignored signal stays ignored across exec).
            let program = """
                import os, signal, sys
                signal.signal(signal.SIGPIPE, signal.SIG_DFL)
                read, write = os.pipe()
                os.close(read)
                os.dup2(write, 2)
                os.close(write)
                os.execv(sys.argv[1], sys.argv[1:])
                """
            return try await ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/python3"), ["-c", program, sandbox.executable.path, "--db", sandbox.db] + arguments,
                environment: sandbox.environment(), timeout: .seconds(30))
        }
        let usage = try await withStderrGone(["bogus"])
        #expect(usage.exited && usage.status == ExitCode.usage, "exit \(usage.status)")
        // A --now before the last event prints a warning, then saves.
        let load = try await withStderrGone(["--now", Day.dec2, "load", sandbox.url("/films.json"), "--key", "late", "--contract", "films"])
        #expect(load.exited && load.status == ExitCode.ok, "exit \(load.status)")
        let state = try await sandbox.cachelog("state", "--key", "late", "--format", "json")
        #expect((try state.json()["entries"] as? [Any])?.count == 1, "\(state)")
    }

    @Test(.enabled(if: DeviceNode.canMake, "a device node of the test's own takes mknod (CAP_MKNOD)"),
          arguments: [["state", "--format", "json"], ["replay"], ["searches"], ["load", "URL", "--key", "films", "--contract", "films"]])
    func aFullDisk_underStdout_isExitOne_withOneLine(arguments: [String]) async throws {
        let sandbox = try await seeded()
        let arguments = arguments.map { $0 == "URL" ? sandbox.url("/films.json") : $0 }
        // A full device of the test's own (Tests/README.md): never the system's /dev/full.
        let full = sandbox.path("full")
        try DeviceNode.full.make(at: full)

        let result = try await shell(sandbox, arguments, ">'\(full)'")

        #expect(result.exited && result.status == ExitCode.failure, "\(result.status) \(result.stderrText)")
        #expect(result.stderrText == "cachelog: cannot write the output: No space left on device\n")
    }

    @Test(.enabled(if: !FakedClock.isActive, "libfaketime opens its shared memory as descriptor 1 when stdout is closed"))
    func aClosedStdout_isExitOne_andTheDatabaseIsNotWrittenThroughIt() async throws {
        let sandbox = try await seeded()

        let result = try await shell(sandbox, ["state", "--format", "json"], ">&-")

        #expect(result.exited && result.status == ExitCode.failure, "\(result.status) \(result.stderrText)")
        #expect(result.stderrText.hasPrefix("cachelog: cannot write the output"))
        #expect(try await sandbox.cachelog("verify").status == ExitCode.ok)
    }

    /// SIGQUIT too: left to the Swift runtime, it printed a 56-line crash backtrace and the run
    /// carried on.
    @Test(arguments: [(SIGHUP, Int32(129)), (SIGINT, Int32(130)), (SIGQUIT, Int32(131)), (SIGTERM, Int32(143))])
    func follow_interrupted_exits128PlusTheSignal_sayingNothing(signal: Int32, status: Int32) async throws {
        let sandbox = try await seeded()
        let child = try ChildProcess(sandbox.executable, ["--db", sandbox.db, "replay", "--follow", "--format", "jsonl"], environment: sandbox.environment())
        // Wait until it has printed the history: it is following by then.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(20)
        while (try? Data(contentsOf: child.stdoutFile))?.filter({ $0 == 0x0A }).count ?? 0 < 8, clock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }

        child.send(signal)
        let result = await child.finish(timeout: .seconds(20))

        #expect(result.exited && result.status == status, "\(result.status) \(result.stderrText)")
        #expect(result.stderrText.isEmpty, "\(result.stderrText)")
    }

    /// A load interrupted while it waits for the remote is a failure said in one line, as every
    /// failure is (a follow, which an interrupt is how one ends, says nothing).
    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func load_interrupted_exits128PlusTheSignal_inOneLine(signal: Int32, status: Int32) async throws {
        let answer = Gate()
        defer { answer.open() }
        let sandbox = try Sandbox(serving: { _ in
            answer.wait()
            return .json(Feeds.films)
        })
        let child = try ChildProcess(sandbox.executable, ["--db", sandbox.db, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films"],
                                     environment: sandbox.environment())
        try #require(await sandbox.server.waitForRequests(count: 1), "the load never asked")

        child.send(signal)
        let result = await child.finish(timeout: .seconds(60))

        #expect(result.exited && result.status == status, "\(result.status) \(result.stderrText)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrText == "cachelog: interrupted; nothing was printed, and a save is whole in the log or absent\n", "\(result.stderrText)")
    }

    /// A load that has saved and printed its result is done: a signal that arrives while the
    /// process ends does not make it report an interruption (it did, in 9 of 60 tries). The
    /// signal is sent the moment the whole result is read, many times over; a run that ended
    /// before the signal proves nothing, one that was still ending must exit 0 too.
    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalAfterTheResultIsPrinted_leavesTheExitStatusTheCommands(signal: Int32) async throws {
        let sandbox = try Sandbox()
        var signalled = 0
        for attempt in 0..<40 {
            let child = try ChildProcess(
                sandbox.executable, ["--db", sandbox.db, "--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films-\(attempt)",
                                     "--contract", "films", "--format", "json"],
                environment: sandbox.environment())
            let printed = try await eventually(timeout: .seconds(300)) {
                (try? Data(contentsOf: child.stdoutFile)).map { $0.last == UInt8(ascii: "\n") } ?? false
            }
            try #require(printed, "the load printed no result")
            if child.isRunning {
                child.send(signal)
                signalled += 1
            }
            let result = await child.finish(timeout: .seconds(60))
            #expect(result.exited && result.status == ExitCode.ok, "attempt \(attempt): exit \(result.status) \(result.stderrText)")
            #expect(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any] != nil)
        }
        print("signalled \(signalled) of 40 runs while they were still ending")
    }
}
