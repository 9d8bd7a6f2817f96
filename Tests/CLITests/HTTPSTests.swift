import CacheLog
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// `load` and `image` over HTTPS, through the built binary, against a loopback TLS server whose
/// certificate was made for the test: trusted with `--cacert` (alone), and otherwise a failure
/// that says what failed while the cache serves as for any remote failure. And the other network
/// options: `--max-body`, `--cacert`'s checks, the User-Agent.
@Suite("cachelog over HTTPS and the network options", .hangGuard)
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

    /// Files that hold no certificate a TLS library could use, each made by the test.
    static let certificatelessFiles: [(name: String, content: String)] = [
        ("empty.pem", ""),
        ("not-pem.pem", "these are not the certificates you are looking for\n"),
        ("key-only.pem", "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n"),
        ("bad-base64.pem", "-----BEGIN CERTIFICATE-----\n!!!! not base64 !!!!\n-----END CERTIFICATE-----\n"),
        ("not-a-certificate.pem", "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n"),
    ]

    @Test
    func cacert_thatHoldsNoCertificate_isAUsageErrorBeforeAnyRequest_evenWithACacheToServe() async throws {
        let sandbox = try Sandbox()
        let server = try await TLSTestServer(body: Feeds.films)
        let url = server.url("/films.json").absoluteString
        let cached = try await sandbox.cachelog(
            "--now", Day.dec1, "load", url, "--key", "films", "--contract", "films", "--cacert", server.certificateFile)
        #expect(cached.status == ExitCode.ok, "\(cached)")
        let requests = server.events.count

        for file in Self.certificatelessFiles {
            let path = sandbox.path(file.name)
            try Data(file.content.utf8).write(to: URL(fileURLWithPath: path))
            let result = try await sandbox.cachelog(
                "--now", Day.dec2, "load", url, "--key", "films", "--contract", "films", "--strategy", "remote-first", "--cacert", path)
            #expect(result.status == ExitCode.usage, "\(file.name): \(result)")
            #expect(result.stdout.isEmpty, "\(file.name): \(result)")
            let problem = file.name.hasPrefix("bad") || file.name.hasPrefix("not-a")
                ? "\(path): certificate 1 is not a valid PEM certificate" : "\(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
            #expect(result.stderrLines == ["cachelog: --cacert: \(problem) (see 'cachelog load --help')"], "\(file.name): \(result)")
        }
        #expect(server.events.count == requests, "no request was made: \(server.events)")
        await server.stop()
    }

    @Test
    func cacert_isReadOnce_soAPipeWorks() async throws {
        let sandbox = try Sandbox()
        let server = try await TLSTestServer(body: Feeds.films)
        // bash's process substitution: --cacert names a pipe, which can be read only once.
        let script = #"exec "$0" --db "$1" load "$2" --key films --contract films --cacert <(cat "$3")"#
        let result = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"), ["-c", script, sandbox.executable.path, sandbox.db, server.url("/films.json").absoluteString, server.certificateFile],
            environment: sandbox.environment(), timeout: .seconds(30))
        #expect(result.status == ExitCode.ok, "\(result.stderrText)")
        #expect(result.stdoutText.hasPrefix("films: 2 items from remote"), "\(result.stdoutText)")
        await server.stop()
    }

    /// `--cacert FILE` trusts FILE alone: not libcurl's default bundle, and not its default
    /// directory of hashed certificates either (/etc/ssl/certs, where a certificate linked in was
    /// trusted beside an unrelated --cacert). The machine's store is left alone: the binary runs
    /// in a mount namespace of its own, where a directory of the test's (the test's CA, hashed by
    /// `openssl rehash`, and a bundle that holds only an unrelated certificate) is mounted over
    /// /etc/ssl/certs. Skipped where the namespace or the mount is refused (not root).
    @Test
    func cacert_trustsItsFileAlone_notTheSystemStore() async throws {
        let sandbox = try Sandbox()
        let server = try await TLSTestServer(body: Feeds.films)
        let store = sandbox.path("certs")
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: server.certificateFile, toPath: store + "/cachelog-test-ca.pem")
        // Named otherwise than the server's: OpenSSL looks issuers up by name, and a certificate of
        // the same name in the bundle would hide the test's CA in the directory.
        let unrelated = try await Self.makeCertificate(in: sandbox.path("unrelated"), name: "unrelated")
        // libcurl's default bundle (curl-config --ca: /etc/ssl/certs/ca-certificates.crt on
        // Debian) must exist, or every handshake fails: it holds the unrelated certificate only.
        try FileManager.default.copyItem(atPath: unrelated, toPath: store + "/ca-certificates.crt")
        let rehash = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/openssl"), ["rehash", store])
        #expect(rehash.status == 0, "openssl rehash: \(rehash.stderrText)")

        let inNamespace = { (arguments: [String]) async throws -> ChildProcess.Result in
            try await ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/unshare"),
                ["--mount", "--propagation", "private", "sh", "-c", #"mount --bind "$0" /etc/ssl/certs && exec "$@""#, store] + arguments,
                environment: sandbox.environment(), timeout: .seconds(30))
        }
        let probe = try await inNamespace(["test", "-f", "/etc/ssl/certs/cachelog-test-ca.pem"])
        guard probe.status == 0 else {
            let reason = "a private mount namespace is refused here (\(probe.stderrText.trimmingCharacters(in: .whitespacesAndNewlines))); run as root to test that --cacert trusts its file alone"
            // A skip with its reason in the run's output, never a pass.
            try Test.cancel(Comment(rawValue: reason))
        }
        let load = { (extra: [String]) in
            try await inNamespace([sandbox.executable.path, "--db", sandbox.db, "load", server.url("/films.json").absoluteString,
                                   "--key", "films", "--contract", "films", "--strategy", "remote-first"] + extra)
        }

        let bySystemStore = try await load([])
        #expect(bySystemStore.status == ExitCode.ok, "the store mounted in the namespace trusts the server: \(bySystemStore.stderrText)")
        #expect(bySystemStore.stdoutText.hasPrefix("films: 2 items from remote"), "\(bySystemStore.stdoutText)")

        let byUnrelatedFile = try await load(["--cacert", unrelated, "--format", "json"])
        #expect(byUnrelatedFile.status == ExitCode.ok, "the cache serves: \(byUnrelatedFile.stderrText)")
        let json = try #require(JSONSerialization.jsonObject(with: byUnrelatedFile.stdout) as? [String: Any], "\(byUnrelatedFile.stdoutText)")
        #expect(json["source"] as? String == "cache", "the store is not trusted beside --cacert: \(byUnrelatedFile.stdoutText)")
        // Served, but said: a refused certificate is a server someone must look at.
        #expect(byUnrelatedFile.stderrText.hasPrefix("cachelog: warning: films came from the cache: remote certificate not trusted: "),
                "\(byUnrelatedFile.stderrText)")

        let nothingCached = try await inNamespace([sandbox.executable.path, "--db", sandbox.path("other-db"), "load",
                                                   server.url("/films.json").absoluteString, "--key", "films", "--cacert", unrelated])
        #expect(nothingCached.status == ExitCode.noUsableData, "\(nothingCached.stderrText)")
        #expect(nothingCached.stderrText.hasPrefix("cachelog: no usable data for films: remote certificate not trusted: "), "\(nothingCached.stderrText)")
        await server.stop()
    }

    /// A self-signed certificate named `name`, for 127.0.0.1, made in `directory`; its path.
    static func makeCertificate(in directory: String, name: String) async throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let certificate = directory + "/cert.pem"
        let made = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/openssl"), [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
            "-subj", "/CN=\(name)", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", directory + "/key.pem", "-out", certificate,
        ])
        #expect(made.status == 0, "openssl req: \(made.stderrText)")
        return certificate
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
        for option in ["--cacert <file>", "Trust only the PEM certificates in this file, not the system's store", "--max-body <bytes>",
                       "(default: 10485760)", "--timeout <seconds>", "--proxy <url>", "--noproxy <list>", "https_proxy", "HTTPS_PROXY",
                       "http_proxy", "HTTP_PROXY is ignored", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
                       "CACHELOG_LIBCURL", "never from https to plain http", "a gzip body without its trailer"] {
            #expect(help.stdout.contains(option), "\(option) missing from:\n\(help.stdout)")
        }
        let image = try await sandbox.run(["image", "--help"], environment: ["COLUMNS": "200"])
        for option in ["--cacert <file>", "--proxy <url>", "--noproxy <list>", "https_proxy", "no_proxy", "CACHELOG_LIBCURL"] {
            #expect(image.stdout.contains(option), "\(option) missing from:\n\(image.stdout)")
        }
    }
}
