import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// `cachelog image`: the film and image feed apps' image data, through the built binary against a
/// loopback server that counts requests.
@Suite("cachelog image", .hangGuard)
struct ImageTests {
    static let poster = Data([0xFF, 0xD8, 0xFF, 0xE0] + (0..<4_096).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })

    private func sandbox(delay: Duration = .zero) throws -> Sandbox {
        try Sandbox(serving: LoopbackHTTPServer.routes([
            "/poster.jpg": HTTPResponse(status: 200, body: Self.poster, delay: delay),
            "/empty.jpg": HTTPResponse(status: 200, body: Data()),
        ]))
    }

    @Test
    func image_firstFromTheRemote_thenFromTheCacheWithNoRequest_byteForByte() async throws {
        let sandbox = try sandbox()
        let url = sandbox.url("/poster.jpg")

        let first = try await sandbox.cachelog("--now", Day.dec1, "image", url, "--format", "json")
        #expect(first.status == ExitCode.ok, "\(first)")
        let report = try first.json()
        #expect(report.string("source") == "remote" && report.int("bytes") == Self.poster.count && report["cached"] as? Bool == true)
        #expect(report.string("key") == "image:" + url)

        let second = try await sandbox.cachelog("--now", Day.dec3, "image", url, "--out", sandbox.path("poster.jpg"), "--format", "json")
        #expect(try second.json().string("source") == "cache")
        #expect(try second.json().int("age") == 2 * 86_400)
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.path("poster.jpg"))) == Self.poster)
        #expect(sandbox.server.requestCount == 1, "the cache served the second")

        // What the log holds, read by Python's lmdb and zlib: the put's payload is the bytes.
        let stored = try await Planting(db: sandbox.db).python("""
            for key, record in txn.cursor(db=events):
                if record[1] == 1:
                    klen, plen, blen = struct.unpack(">HII", record[28:38])
                    print(zlib.decompress(record[38 + klen:38 + klen + blen]).hex())
            """)
        #expect(stored == Self.poster.map { String(format: "%02x", $0) }.joined() + "\n")
    }

    @Test
    func image_toStdout_isTheBytesExactly() async throws {
        let sandbox = try sandbox()
        let out = try ChildProcess(
            sandbox.executable, ["--db", sandbox.db, "image", sandbox.url("/poster.jpg")], environment: sandbox.environment())

        let result = await out.finish()

        #expect(result.exited && result.status == 0, "\(result.stderrText)")
        #expect(result.stdout == Self.poster)
    }

    @Test
    func image_olderThanMaxAge_goesToTheRemoteAgain_andRecordsTheMaxAge() async throws {
        let sandbox = try sandbox()
        let url = sandbox.url("/poster.jpg")
        _ = try await sandbox.cachelog("--now", Day.dec1, "image", url, "--max-age", "1d", "--format", "json")

        let again = try await sandbox.cachelog("--now", Day.dec2, "image", url, "--max-age", "1d", "--format", "json")

        #expect(try again.json().string("source") == "remote")
        #expect(sandbox.server.requestCount == 2)
        let puts = try await sandbox.cachelog("replay", "--type", "put", "--format", "jsonl").jsonLines()
        #expect(puts.map { $0.int("maxAge") } == [86_400, 86_400])
        #expect(puts.allSatisfy { $0.string("contract") == "image" })
    }

    @Test(arguments: ["/missing.jpg", "/empty.jpg"])
    func image_notCachedAndTheRemoteFails_exitsThree_andCachesNothing(path: String) async throws {
        let sandbox = try sandbox()

        let failed = try await sandbox.cachelog("image", sandbox.url(path), "--format", "json")

        #expect(failed.status == ExitCode.noUsableData, "\(failed)")
        #expect(failed.stdout.isEmpty && failed.stderrLines.count == 1)
        #expect(failed.stderr.contains("no cache"))
        #expect(try await sandbox.cachelog("replay", "--format", "jsonl").stdout.isEmpty)
    }

    @Test
    func image_unreachable_exitsThree() async throws {
        let sandbox = try sandbox()

        let failed = try await sandbox.cachelog("image", try deadURL(path: "/poster.jpg"))

        #expect(failed.status == ExitCode.noUsableData, "\(failed)")
        #expect(failed.stderr.contains("remote unreachable"))
    }

    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func image_interruptedDuringTheDownload_deliversNothing_cachesNothing_andExits128PlusTheSignal(signal: Int32, status: Int32) async throws {
        // Far longer than the wait for the request under any load: only the signal ends the run
        // (the server cuts the delay short when it stops).
        let sandbox = try sandbox(delay: .seconds(600))
        let out = sandbox.path("poster.jpg")
        let child = try ChildProcess(
            sandbox.executable, ["--db", sandbox.db, "image", sandbox.url("/poster.jpg"), "--out", out],
            environment: sandbox.environment())
        #expect(await sandbox.server.waitForRequests(count: 1))

        child.send(signal)
        let result = await child.finish(timeout: .seconds(20))

        #expect(result.exited && result.status == status, "\(result.status) \(result.stderrText)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrText.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try await sandbox.cachelog("replay", "--format", "jsonl").stdout.isEmpty)
    }

    @Test
    func image_onATerminalWithoutOut_refusesWithUsage() async throws {
        let sandbox = try sandbox()

        let printed = try await runOnTerminal(
            sandbox, ["--db", sandbox.db, "image", sandbox.url("/poster.jpg")], stderrToo: true, status: ExitCode.usage)

        #expect(printed.contains("refusing to write image bytes to a terminal"), "\(printed)")
        #expect(sandbox.server.requestCount == 0)
    }

    @Test
    func image_withoutNow_reportsTheTimestampItsPutRecorded() async throws {
        let sandbox = try sandbox(delay: .milliseconds(300))

        let loaded = try await sandbox.cachelog("image", sandbox.url("/poster.jpg"), "--format", "json")

        let put = try await sandbox.cachelog("replay", "--type", "put", "--format", "jsonl").jsonLines().first
        #expect(try loaded.json().string("timestamp") == put?.string("timestamp"))
    }

    @Test(arguments: [
        ["image", "ftp://example.com/a.jpg"], ["image", "https://example.com/a.jpg", "--out", ""], ["image"],
        ["image", "https://example.com/a.jpg", "--out", "DIRECTORY"],
    ])
    func image_badCommandLines_exitSixtyFour(arguments: [String]) async throws {
        let sandbox = try sandbox()
        // A directory of the test's own (Tests/README.md).
        let arguments = arguments.map { $0 == "DIRECTORY" ? sandbox.directory.path : $0 }

        let result = try await sandbox.run(["--db", sandbox.db] + arguments)

        #expect(result.status == ExitCode.usage, "\(result)")
    }
}
