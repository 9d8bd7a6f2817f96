import Foundation
import Locking
import LoopbackHTTP
import TestSupport
import Testing

/// Redirects through the built binary, against loopback servers: followed over http and https,
/// never from https down to plain http, never to another scheme, and not forever; each refusal
/// says what it refused.
@Suite("cachelog load: redirects", .hangGuard)
struct RedirectTests {
    @Test
    func aRedirectFromHTTPSToPlainHTTP_isRefused_andSaysSo() async throws {
        let sandbox = try Sandbox()
        let server = try await TLSTestServer(body: Feeds.films)
        let plain = sandbox.url("/films.json")
        let result = try await sandbox.cachelog(
            "load", server.redirect(to: plain).absoluteString, "--key", "films", "--contract", "films", "--cacert", server.certificateFile)
        #expect(result.status == ExitCode.noUsableData, "\(result)")
        #expect(result.stderrLines == [
            "cachelog: no usable data for films: remote redirect to \(plain) refused: it leaves https for plain http; no cache",
        ], "\(result)")
        #expect(sandbox.server.requestCount == 0, "the plain http server is never asked")
        await server.stop()
    }

    @Test
    func aRedirectWithinHTTPS_orFromHTTPUpToHTTPS_isFollowed() async throws {
        let server = try await TLSTestServer(body: Feeds.films)
        let secure = server.url("/films.json").absoluteString
        let sandbox = try Sandbox(serving: { _ in HTTPResponse(status: 302, headers: [HTTPHeader("Location", secure)]) })

        let within = try await sandbox.cachelog(
            "load", server.redirect(to: secure).absoluteString, "--key", "within", "--contract", "films", "--cacert", server.certificateFile)
        #expect(within.status == ExitCode.ok, "\(within)")
        #expect(within.stdoutLines.first?.hasPrefix("within: 2 items from remote") == true, "\(within)")

        let upward = try await sandbox.cachelog(
            "load", sandbox.url("/films.json"), "--key", "upward", "--contract", "films", "--cacert", server.certificateFile)
        #expect(upward.status == ExitCode.ok, "\(upward)")
        #expect(upward.stdoutLines.first?.hasPrefix("upward: 2 items from remote") == true, "\(upward)")
        #expect(sandbox.server.requestCount == 1)
        await server.stop()
    }

    @Test
    func aRedirectLoop_saysTooManyRedirects() async throws {
        let sandbox = try Sandbox(serving: { _ in HTTPResponse(status: 302, headers: [HTTPHeader("Location", "/loop")]) })
        let result = try await sandbox.cachelog("load", sandbox.url("/loop"), "--key", "loop")
        #expect(result.status == ExitCode.noUsableData, "\(result)")
        #expect(result.stderrLines == [
            "cachelog: no usable data for loop: remote sent too many redirects: more than 20, the last to \(sandbox.url("/loop")); no cache",
        ], "\(result)")
        // The first request and 20 redirects followed; the 21st is not.
        #expect(sandbox.server.requestCount == 21)
    }

    @Test(arguments: ["ftp://127.0.0.1/films.json", "file:///etc/passwd", "gopher://127.0.0.1/1"])
    func aRedirectToAnotherScheme_isRefused_namingTheScheme(_ target: String) async throws {
        let sandbox = try Sandbox(serving: { _ in HTTPResponse(status: 301, headers: [HTTPHeader("Location", target)]) })
        let result = try await sandbox.cachelog("load", sandbox.url("/films.json"), "--key", "films")
        #expect(result.status == ExitCode.noUsableData, "\(result)")
        let scheme = String(target.prefix { $0 != ":" })
        #expect(result.stderrLines == [
            "cachelog: no usable data for films: remote redirect to \(target) refused: the \(scheme) scheme is not followed, only http and https; no cache",
        ], "\(result)")
        #expect(sandbox.server.requestCount == 1)
    }

    /// The cache serves, as for any remote failure, but the refusal is said: someone sent the
    /// request where the user did not ask it to go.
    @Test
    func aRefusedRedirect_leavesTheCacheToServe_andSaysWhatItRefused() async throws {
        let redirecting = Locked(false)
        let sandbox = try Sandbox(serving: { _ in
            redirecting.withLock { $0 } ? HTTPResponse(status: 302, headers: [HTTPHeader("Location", "ftp://127.0.0.1/films.json")]) : .json(Feeds.films)
        })
        let cached = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(cached.status == ExitCode.ok, "\(cached)")
        redirecting.withLock { $0 = true }
        let served = try await sandbox.cachelog(
            "--now", Day.dec2, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films", "--strategy", "remote-first", "--format", "json")
        #expect(served.status == ExitCode.ok, "\(served)")
        #expect(try served.json().string("source") == "cache")
        #expect(served.stderrLines == [
            "cachelog: warning: films came from the cache: remote redirect to ftp://127.0.0.1/films.json refused: the ftp scheme is not followed, only http and https",
        ], "\(served)")
    }
}
