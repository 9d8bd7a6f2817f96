import CacheLog
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// `load` and `image` over HTTPS, through the built binary, against a loopback TLS server whose
/// certificate was made for the test: trusted with `--cacert`, and otherwise a failure that says
/// what failed while the cache serves as for any remote failure. And the other network options:
/// `--max-body`, `--cacert`'s checks, the User-Agent.
@Suite("cachelog over HTTPS and the network options", .timeLimit(.minutes(2)))
struct HTTPSTests {
    @Test
    func load_https_withTheServersCertificateAsCacert_loadsAndCaches() async throws {
        let sandbox = try Sandbox()
        let server = try await TLSTestServer(body: Feeds.films)
        let result = try await sandbox.cachelog(
            "--now", Day.dec1, "load", server.url("/films.json").absoluteString, "--key", "films", "--contract", "films",
            "--cacert", server.certificateFile, "--format", "json")
        #expect(result.status == ExitCode.ok, "\(result)")
        let json = try result.json()
        #expect(json.string("source") == "remote")
        #expect((json["items"] as? [Any])?.count == 2)
        await server.stop()
    }

    @Test
    func load_https_untrusted_saysCertificateNotTrusted_andServesTheCache() async throws {
        let sandbox = try Sandbox()
        let server = try await TLSTestServer(body: Feeds.films)
        let url = server.url("/films.json").absoluteString

        let nothingCached = try await sandbox.cachelog("--now", Day.dec1, "load", url, "--key", "films", "--contract", "films")
        #expect(nothingCached.status == ExitCode.noUsableData, "\(nothingCached)")
        #expect(nothingCached.stderrLines.count == 1, "\(nothingCached)")
        #expect(nothingCached.stderr.hasPrefix("cachelog: no usable data for films: remote certificate not trusted: "), "\(nothingCached)")
        #expect(nothingCached.stderr.hasSuffix("; no cache\n"), "\(nothingCached)")

        let trusted = try await sandbox.cachelog(
            "--now", Day.dec1, "load", url, "--key", "films", "--contract", "films", "--cacert", server.certificateFile)
        #expect(trusted.status == ExitCode.ok, "\(trusted)")
        let fromCache = try await sandbox.cachelog("--now", Day.dec2, "load", url, "--key", "films", "--contract", "films", "--format", "json")
        #expect(fromCache.status == ExitCode.ok, "\(fromCache)")
        #expect(try fromCache.json().string("source") == "cache")
        await server.stop()
    }

    @Test
    func load_https_toANameTheCertificateIsNotFor_saysCertificateNotTrusted() async throws {
        let sandbox = try Sandbox()
        let server = try await TLSTestServer(body: Feeds.films)
        let result = try await sandbox.cachelog(
            "load", server.url("/films.json", host: "localhost").absoluteString, "--key", "films", "--contract", "films",
            "--cacert", server.certificateFile)
        #expect(result.status == ExitCode.noUsableData, "\(result)")
        #expect(result.stderr.hasPrefix("cachelog: no usable data for films: remote certificate not trusted: "), "\(result)")
        #expect(result.stderr.contains("localhost"), "\(result)")
        await server.stop()
    }

    @Test
    func load_https_toAPlainHTTPServer_saysTheTLSHandshakeFailed() async throws {
        let sandbox = try Sandbox()
        let server = try await TLSTestServer(body: Feeds.films)
        let result = try await sandbox.cachelog("load", "https://127.0.0.1:\(server.plainPort)/films.json", "--key", "films", "--contract", "films")
        #expect(result.status == ExitCode.noUsableData, "\(result)")
        #expect(result.stderr.hasPrefix("cachelog: no usable data for films: remote TLS handshake failed: "), "\(result)")
        await server.stop()
    }

    @Test
    func image_https_withTheServersCertificateAsCacert_deliversTheBytes() async throws {
        let sandbox = try Sandbox()
        let server = try await TLSTestServer(body: Feeds.films)
        let result = try await sandbox.cachelog(
            "image", server.url("/poster.jpg").absoluteString, "--cacert", server.certificateFile, "--out", sandbox.path("poster"))
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.path("poster"))) == Data(Feeds.films.utf8))
        await server.stop()
    }

    @Test(arguments: [["load", "/films.json", "--key", "films"], ["image", "/poster.jpg", "--format", "json"]])
    func cacert_thatIsNotAReadableFile_isAUsageError(_ command: [String]) async throws {
        let sandbox = try Sandbox()
        for file in [sandbox.path("missing.pem"), sandbox.directory.path] {
            let result = try await sandbox.run(["--db", sandbox.db, command[0], sandbox.url(command[1])] + command.dropFirst(2) + ["--cacert", file])
            #expect(result.status == ExitCode.usage, "\(result)")
            #expect(result.stderrLines == [
                "cachelog: --cacert must name a readable file of PEM certificates, not '\(file)' (see 'cachelog \(command[0]) --help')",
            ], "\(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.db), "a usage error creates nothing")
    }

    @Test
    func load_aBodyOverMaxBody_isInvalidData_andOneAtItLoads() async throws {
        // 2000 bytes of JSON: over the smallest limit there is.
        let body = "[" + Array(repeating: "0", count: 1000).joined(separator: ",") + "]"
        let sandbox = try Sandbox(serving: { _ in .json(body) })
        let over = try await sandbox.cachelog("load", sandbox.url("/n.json"), "--key", "n", "--max-body", "1024")
        #expect(over.status == ExitCode.noUsableData, "\(over)")
        #expect(over.stderrLines == ["cachelog: no usable data for n: remote sent invalid data: the body is larger than the limit of 1024 bytes; no cache"])
        let at = try await sandbox.cachelog("load", sandbox.url("/n.json"), "--key", "n", "--max-body", "\(body.utf8.count)", "--format", "json")
        #expect(at.status == ExitCode.ok, "\(at)")
        #expect((try at.json()["items"] as? [Any])?.count == 1000)
    }

    @Test(arguments: ["1023", "1073741825", "-1", "ten", "0"])
    func maxBody_outOfRange_isAOneLineUsageError(_ value: String) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.cachelog("load", sandbox.url("/films.json"), "--key", "films", "--max-body", value)
        #expect(result.status == ExitCode.usage, "\(result)")
        #expect(result.stderrLines.first?.contains("--max-body") == true, "\(result)")
        #expect(sandbox.server.requestCount == 0)
    }

    @Test
    func load_sendsTheToolsNameAndVersionAsUserAgent() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.cachelog("load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(sandbox.server.requests.map { $0.header("User-Agent") } == ["cachelog/\(EventLog.version)"])
    }

    @Test
    func loadHelp_documentsTheNetworkOptions() async throws {
        let sandbox = try Sandbox()
        let help = try await sandbox.run(["load", "--help"], environment: ["COLUMNS": "200"])
        for option in ["--cacert <file>", "--max-body <bytes>", "(default: 10485760)", "--timeout <seconds>"] {
            #expect(help.stdout.contains(option), "\(option) missing from:\n\(help.stdout)")
        }
    }
}
