import CacheLog
import Foundation
import Locking
import LoopbackHTTP
import TestSupport
import Testing

/// The edges of a transfer, through the built binary: libcurl missing or broken, a gzip body that
/// stops short or decodes past the limit, header bytes that are not UTF-8.
@Suite("cachelog load: transfer edges", .hangGuard)
struct TransferEdgeTests {
    // MARK: libcurl missing or broken

    /// A libcurl that is not there, and one that is not a library: CACHELOG_LIBCURL names each.
    private func brokenLibraries(_ sandbox: Sandbox) throws -> [String] {
        let notALibrary = sandbox.path("libcurl-that-is-text.so.4")
        try Data("not an ELF file\n".utf8).write(to: URL(fileURLWithPath: notALibrary))
        return [sandbox.path("missing/libcurl.so.4"), notALibrary]
    }

    @Test
    func load_withoutLibcurl_servesTheCache_andSaysSoInOneLineOnStderr() async throws {
        let sandbox = try Sandbox()
        let cached = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(cached.status == ExitCode.ok, "\(cached)")

        for library in try brokenLibraries(sandbox) {
            let result = try await sandbox.run(
                ["--db", sandbox.db, "--now", Day.dec2, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films",
                 "--strategy", "remote-first", "--format", "json"],
                environment: ["CACHELOG_LIBCURL": library])
            #expect(result.status == ExitCode.ok, "\(result)")
            #expect(try result.json().string("source") == "cache", "\(result)")
            #expect(result.stderrLines.count == 1, "\(result)")
            let line = result.stderrLines.first ?? ""
            #expect(line.hasPrefix("cachelog: warning: films came from the cache: remote not asked: libcurl could not be loaded (\(library): "), "\(result)")
            #expect(line.hasSuffix("); install the libcurl4 package (apt-get install libcurl4)"), "\(result)")
        }
        #expect(sandbox.server.requestCount == 1, "only the first load reached the server")
    }

    @Test
    func load_withoutLibcurl_andNoCache_isNoUsableData_sayingWhatToInstall() async throws {
        let sandbox = try Sandbox()
        for library in try brokenLibraries(sandbox) {
            let result = try await sandbox.run(
                ["--db", sandbox.db, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films"],
                environment: ["CACHELOG_LIBCURL": library])
            #expect(result.status == ExitCode.noUsableData, "\(result)")
            #expect(result.stderrLines.count == 1, "\(result)")
            #expect(result.stderr.hasPrefix("cachelog: no usable data for films: remote not asked: libcurl could not be loaded (\(library): "), "\(result)")
            #expect(result.stderr.hasSuffix("install the libcurl4 package (apt-get install libcurl4); no cache\n"), "\(result)")
        }
        #expect(sandbox.server.requestCount == 0)
    }

    @Test
    func load_ofAFreshCacheFirst_needsNoLibcurl_andSaysNothing() async throws {
        let sandbox = try Sandbox()
        let cached = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(cached.status == ExitCode.ok, "\(cached)")
        let result = try await sandbox.run(
            ["--db", sandbox.db, "--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films", "--strategy", "cache-first"],
            environment: ["CACHELOG_LIBCURL": sandbox.path("missing/libcurl.so.4")])
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
    }

    @Test
    func libcurlVariable_namesTheLibraryToLoad() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(
            ["--db", sandbox.db, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films"],
            environment: ["CACHELOG_LIBCURL": "libcurl.so.4"])
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(sandbox.server.requestCount == 1)
    }

    // MARK: content encoding

    private static func encoded(_ body: Data, as coding: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "application/json"), HTTPHeader("Content-Encoding", coding)], body: body)
    }

    @Test(arguments: ["gzip", "deflate"])
    func load_ofAnEncodedBody_decodesIt(_ coding: String) async throws {
        let films = Data(Feeds.films.utf8)
        let body = coding == "gzip" ? Compressed.gzip(films) : Compressed.deflate(films)
        let sandbox = try Sandbox(serving: { _ in Self.encoded(body, as: coding) })
        let result = try await sandbox.cachelog("load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stdoutLines.first?.hasPrefix("films: 2 items from remote") == true, "\(result)")
        let accepted = sandbox.server.requests.first?.header("Accept-Encoding") ?? ""
        #expect(accepted.contains(coding), "\(accepted)")
    }

    @Test
    func load_ofAGzipBodyWithoutItsTrailer_isInvalidData_andIsNotCached() async throws {
        let truncated = Compressed.gzipWithoutTrailer(Data(Feeds.newerFilms.utf8))
        let cutShort = Locked(false)
        let sandbox = try Sandbox(serving: { _ in
            cutShort.withLock { $0 } ? Self.encoded(truncated, as: "gzip") : .json(Feeds.films)
        })
        cutShort.withLock { $0 = true }
        let nothingCached = try await sandbox.cachelog(
            "--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films", "--retries", "0")
        #expect(nothingCached.status == ExitCode.noUsableData, "\(nothingCached)")
        #expect(nothingCached.stderrLines == [
            "cachelog: no usable data for films: remote sent invalid data: the gzip body is truncated: it ends before its gzip stream does; no cache",
        ], "\(nothingCached)")

        cutShort.withLock { $0 = false }
        let cached = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(cached.status == ExitCode.ok, "\(cached)")
        cutShort.withLock { $0 = true }
        let served = try await sandbox.cachelog(
            "--now", Day.dec2, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films", "--strategy", "remote-first",
            "--retries", "0", "--format", "json")
        #expect(served.status == ExitCode.ok, "\(served)")
        let json = try served.json()
        #expect(json.string("source") == "cache")
        #expect((json["items"] as? [Any])?.count == 2, "the truncated feed (3 films) was not cached")
    }

    @Test
    func load_ofAGzipBodyWithABadChecksum_isInvalidData() async throws {
        var damaged = Compressed.gzip(Data(Feeds.films.utf8))
        damaged[damaged.count - 8] ^= 0xFF
        let body = damaged
        let sandbox = try Sandbox(serving: { _ in Self.encoded(body, as: "gzip") })
        let result = try await sandbox.cachelog("load", sandbox.url("/films.json"), "--key", "films", "--contract", "films", "--retries", "0")
        #expect(result.status == ExitCode.noUsableData, "\(result)")
        #expect(result.stderrLines == [
            "cachelog: no usable data for films: remote sent invalid data: the gzip body is corrupt: incorrect data check; no cache",
        ], "\(result)")
    }

    @Test
    func load_ofAGzipBodyThatDecodesPastMaxBody_isInvalidData() async throws {
        // 2 MiB of JSON that compresses to a few kilobytes: the limit counts the decoded bytes.
        let huge = Data(("[" + String(repeating: "0,", count: 1 << 20) + "0]").utf8)
        let body = Compressed.gzip(huge)
        #expect(body.count < 1 << 20)
        let sandbox = try Sandbox(serving: { _ in Self.encoded(body, as: "gzip") })
        let result = try await sandbox.cachelog("load", sandbox.url("/n.json"), "--key", "n", "--max-body", "\(1 << 20)", "--retries", "0")
        #expect(result.status == ExitCode.noUsableData, "\(result)")
        #expect(result.stderrLines == [
            "cachelog: no usable data for n: remote sent invalid data: the body is larger than the limit of \(1 << 20) bytes; no cache",
        ], "\(result)")
    }

    // MARK: header bytes

    /// An ETag as its bytes on the wire, read as ISO-8859-1 (as the loopback server reads and
    /// writes headers): `"\u{FF}\u{FE}"` is the four bytes 22 FF FE 22.
    static let etags = ["\"\u{FF}\u{FE}\"", "\"\u{C3}\u{A9}\"", #"W/"plain""#]

    @Test(arguments: etags)
    func anETag_goesBackByteForByte(_ etag: String) async throws {
        let sandbox = try Sandbox(serving: { request in
            request.header("If-None-Match") == etag
                ? HTTPResponse(status: 304, headers: [HTTPHeader("ETag", etag)])
                : HTTPResponse(status: 200, headers: [HTTPHeader("ETag", etag), HTTPHeader("Content-Type", "application/json")], body: Data(Feeds.films.utf8))
        })
        let first = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(first.status == ExitCode.ok, "\(first)")
        let second = try await sandbox.cachelog(
            "--now", Day.dec2, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films", "--strategy", "remote-first", "--format", "json")
        #expect(second.status == ExitCode.ok, "\(second)")
        #expect(try second.json()["revalidated"] as? Bool == true, "\(second)")
        #expect(sandbox.server.requests.map { $0.header("If-None-Match") } == [nil, etag])
    }

    /// A database written when header bytes were read as UTF-8 kept the ETag `"é"` for the bytes
    /// 22 C3 A9 22, with no `validator-charset`: it still goes back as those bytes.
    @Test
    func anETagSavedByAnEarlierVersion_goesBackAsTheBytesItCameAs() async throws {
        let wire = "\"\u{C3}\u{A9}\""
        let sandbox = try Sandbox(serving: { request in
            request.header("If-None-Match") == wire
                ? HTTPResponse(status: 304, headers: [HTTPHeader("ETag", wire)])
                : HTTPResponse(status: 200, headers: [HTTPHeader("ETag", #""v1""#), HTTPHeader("Content-Type", "application/json")], body: Data(Feeds.films.utf8))
        })
        let first = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(first.status == ExitCode.ok, "\(first)")
        do {
            // The put an earlier version wrote: the same save, its ETag decoded as UTF-8.
            let log = try EventLog(path: sandbox.db)
            let stored = try #require(try log.retrieve("films"))
            var metadata = stored.metadata
            metadata["etag"] = "\"é\""
            #expect(metadata["validator-charset"] == nil)
            _ = try await log.append(.put(key: "films", payload: stored.payload, timestamp: stored.timestamp, maxAge: stored.maxAge, metadata: metadata))
        }
        let second = try await sandbox.cachelog(
            "--now", Day.dec2, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films", "--strategy", "remote-first", "--format", "json")
        #expect(second.status == ExitCode.ok, "\(second)")
        #expect(try second.json()["revalidated"] as? Bool == true, "\(second)")
        #expect(sandbox.server.requests.map { $0.header("If-None-Match") } == [nil, wire])
    }
}
