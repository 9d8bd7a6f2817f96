import Foundation
import Locking
import LoopbackHTTP
import TestSupport
import Testing

/// Conditional requests through the built binary: the validators a save kept go back to the
/// server, whose 304 refreshes the cache without a body and without a second copy of the feed.
@Suite("cachelog load: revalidation", .hangGuard)
struct RevalidationTests {
    static let lastModified = "Tue, 01 Dec 2026 09:00:00 GMT"

    /// A films server that honours If-None-Match and If-Modified-Since for its current version,
    /// and counts the body bytes it sent.
    final class FilmsServer: Sendable {
        private struct State {
            var etag = #"W/"films-1""#
            var body = Feeds.films
            var honoursValidators = true
            var bodyBytesSent = 0
        }
        private let state = Locked(State())

        var bodyBytesSent: Int { state.withLock { $0.bodyBytesSent } }

        /// Publishes another version of the feed under another ETag.
        func publish(_ body: String, etag: String) { state.withLock { $0.body = body; $0.etag = etag } }

        /// From now on, answers every request with the whole feed, as servers without revalidation do.
        func ignoreValidators() { state.withLock { $0.honoursValidators = false } }

        var handler: LoopbackHTTPServer.Handler {
            { [self] request in
                state.withLock { state in
                    let headers = [HTTPHeader("ETag", state.etag), HTTPHeader("Last-Modified", RevalidationTests.lastModified)]
                    let unchanged = request.header("If-None-Match") == state.etag
                        || (request.header("If-None-Match") == nil && request.header("If-Modified-Since") == RevalidationTests.lastModified)
                    if state.honoursValidators, unchanged {
                        return HTTPResponse(status: 304, headers: headers)
                    }
                    state.bodyBytesSent += state.body.utf8.count
                    return HTTPResponse(status: 200, headers: headers + [HTTPHeader("Content-Type", "application/json")], body: Data(state.body.utf8))
                }
            }
        }
    }

    private func load(_ sandbox: Sandbox, at now: String, _ more: String...) async throws -> CLIResult {
        try await sandbox.run(["--db", sandbox.db, "--now", now, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films"] + more)
    }

    /// Each put's flags byte, metadata and payload seq, read with Python's `lmdb` module.
    private func puts(_ sandbox: Sandbox) async throws -> [(seq: Int, reference: Bool, payloadSeq: Int, metadata: [String: String])] {
        let printed = try await Planting(db: sandbox.db).python("""
            import json
            for key, record in txn.cursor(db=events):
                if record[1] != 1: continue
                flags = record[2]
                klen, plen, blen = struct.unpack(">HII", record[28:38])
                body = record[38 + klen:38 + klen + blen]
                metadata = {}
                if flags & 8:
                    at = 38 + klen + blen + 2
                    while at < len(record) - 4:
                        n = record[at]; name = record[at + 1:at + 1 + n].decode(); at += 1 + n
                        v, = struct.unpack(">H", record[at:at + 2]); metadata[name] = record[at + 2:at + 2 + v].decode(); at += 2 + v
                own, = struct.unpack(">Q", key)
                print(json.dumps([own, bool(flags & 2), struct.unpack(">Q", body)[0] if flags & 2 else own, metadata]))
            """)
        return try printed.split(separator: "\n").map { line in
            let fields = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [Any])
            return (
                seq: try #require(fields[0] as? Int), reference: try #require(fields[1] as? Bool),
                payloadSeq: try #require(fields[2] as? Int), metadata: try #require(fields[3] as? [String: String]))
        }
    }

    @Test
    func load_revalidatesAnExpiredCacheWithA304_thatSendsNoBody_andStoresNoSecondCopy() async throws {
        let films = FilmsServer()
        let sandbox = try Sandbox(serving: films.handler)

        let first = try await load(sandbox, at: Day.dec1, "--format", "json")
        #expect(first.status == ExitCode.ok, "\(first)")
        #expect(try first.json().string("source") == "remote")
        #expect(try first.json()["revalidated"] as? Bool == false)
        #expect(films.bodyBytesSent == Feeds.films.utf8.count)

        // Nine days later the cache is past its 7 days; the server says it has not changed.
        let second = try await load(sandbox, at: Day.dec10, "--format", "json")
        #expect(second.status == ExitCode.ok, "\(second)")
        #expect(second.stderr.isEmpty)
        let json = try second.json()
        #expect(json.string("source") == "remote")
        #expect(json["revalidated"] as? Bool == true)
        #expect(json["cached"] as? Bool == true)
        #expect(json.string("timestamp") == Day.dec10)
        #expect(json.int("age") == 0)
        #expect((json["items"] as? [[String: Any]])?.compactMap { $0.string("title") } == ["Castle in the Sky", "My Neighbor Totoro"])
        #expect(films.bodyBytesSent == Feeds.films.utf8.count, "the 304 sent no body bytes")
        #expect(sandbox.server.requests.map { $0.header("If-None-Match") } == [nil, #"W/"films-1""#])
        #expect(sandbox.server.requests.map { $0.header("If-Modified-Since") } == [nil, Self.lastModified])

        // The refresh is one put whose body is a reference to the bytes of the first put.
        let puts = try await puts(sandbox)
        #expect(puts.map(\.seq) == [2, 3])
        #expect(puts.map(\.reference) == [false, true])
        #expect(puts.map(\.payloadSeq) == [2, 2])
        // The refresh's request began with the log at seq 2, the first save's put.
        #expect(puts.last?.metadata == [
            "contract": "films", "contract-by": "cachelog", "etag": #"W/"films-1""#, "last-modified": Self.lastModified,
            "url": sandbox.url("/films.json"), "since": "2",
        ])

        // Fresh again: offline, the cache serves with its new timestamp.
        sandbox.server.setHandler { _ in .status(500) }
        let offline = try await load(sandbox, at: Day.dec10)
        #expect(offline.status == ExitCode.ok, "\(offline)")
        #expect(offline.stdoutLines.first == "films: 2 items from cache, cached \(Day.dec10) (age 0s)")
        let verify = try await sandbox.cachelog("verify")
        #expect(verify.status == ExitCode.ok, "\(verify)")
    }

    @Test
    func load_notModified_saysSoInItsTextLine() async throws {
        let films = FilmsServer()
        let sandbox = try Sandbox(serving: films.handler)
        _ = try await load(sandbox, at: Day.dec1)

        let second = try await load(sandbox, at: Day.dec2)

        #expect(second.status == ExitCode.ok, "\(second)")
        #expect(second.stdoutLines == [
            "films: 2 items from remote (not modified), cached \(Day.dec2) (age 0s)",
            "  Castle in the Sky",
            "  My Neighbor Totoro",
        ])
        let replay = try await sandbox.cachelog("replay", "--format", "jsonl")
        #expect(try replay.jsonLines().map { $0.string("type") ?? "?" } == ["delete", "put", "put"])
        // The refresh has no delete in front, and still replaces the version it refreshed.
        let audit = try await sandbox.cachelog("--now", Day.dec2, "audit", "--key", "films", "--format", "json")
        let timeline = (try audit.json()["keys"] as? [[String: Any]])?.first?["timeline"] as? [[String: Any]] ?? []
        #expect(timeline.map { $0.string("kind") ?? "?" } == ["written", "replaced"], "\(audit)")
        #expect(timeline.last?.string("text")?.hasSuffix("replacing seq 2") == true, "\(audit)")
    }

    @Test
    func load_aNewVersionWithANewETag_isCachedAsUsual_andItsETagIsSentNextTime() async throws {
        let films = FilmsServer()
        let sandbox = try Sandbox(serving: films.handler)
        _ = try await load(sandbox, at: Day.dec1)
        films.publish(Feeds.newerFilms, etag: #""films-2""#)

        let changed = try await load(sandbox, at: Day.dec2, "--format", "json")
        let again = try await load(sandbox, at: Day.dec3, "--format", "json")

        #expect(changed.status == ExitCode.ok, "\(changed)")
        #expect(try changed.json()["revalidated"] as? Bool == false)
        #expect((try changed.json()["items"] as? [Any])?.count == 3)
        #expect(try again.json()["revalidated"] as? Bool == true)
        #expect((try again.json()["items"] as? [Any])?.count == 3)
        #expect(sandbox.server.requests.map { $0.header("If-None-Match") } == [nil, #"W/"films-1""#, #""films-2""#])
        #expect(films.bodyBytesSent == Feeds.films.utf8.count + Feeds.newerFilms.utf8.count)
    }

    @Test
    func load_fromAServerThatIgnoresValidators_cachesTheWholeFeedAsBefore() async throws {
        let films = FilmsServer()
        films.ignoreValidators()
        let sandbox = try Sandbox(serving: films.handler)
        _ = try await load(sandbox, at: Day.dec1)

        let second = try await load(sandbox, at: Day.dec2, "--format", "json")

        #expect(second.status == ExitCode.ok, "\(second)")
        #expect(try second.json().string("source") == "remote")
        #expect(try second.json()["revalidated"] as? Bool == false)
        #expect(films.bodyBytesSent == 2 * Feeds.films.utf8.count)
        let replay = try await sandbox.cachelog("replay", "--format", "jsonl")
        #expect(try replay.jsonLines().map { $0.string("type") ?? "?" } == ["delete", "put", "delete", "put"])
    }

    @Test
    func load_a304WithNothingCached_exits3_sayingWhy_andSavesNothing() async throws {
        let sandbox = try Sandbox(serving: { _ in HTTPResponse(status: 304, headers: [HTTPHeader("ETag", #""v1""#)]) })

        let result = try await load(sandbox, at: Day.dec1)

        #expect(result.status == ExitCode.noUsableData, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines == ["cachelog: no usable data for films: remote sent invalid data: HTTP status 304, not 200; no cache"])
        let replay = try await sandbox.cachelog("replay", "--format", "jsonl")
        #expect(try replay.jsonLines().isEmpty)
    }

    @Test
    func load_withADamagedCache_asksForTheWholeFeed_andCachesAFreshCopy() async throws {
        let films = FilmsServer()
        let sandbox = try Sandbox(serving: films.handler)
        _ = try await load(sandbox, at: Day.dec1)
        // The put's checksum no longer matches: its payload (and validators) cannot be read.
        try await Planting(db: sandbox.db).flipByte(ofRecord: 2, offsetFromEnd: 1)

        let second = try await load(sandbox, at: Day.dec2, "--format", "json")

        #expect(second.status == ExitCode.ok, "\(second)")
        #expect(try second.json()["revalidated"] as? Bool == false)
        #expect(sandbox.server.requests.map { $0.header("If-None-Match") } == [nil, nil])
        #expect(films.bodyBytesSent == 2 * Feeds.films.utf8.count)
        let puts = try await puts(sandbox)
        #expect(puts.last?.reference == false, "a fresh copy, never a reference to damaged bytes")
    }

    @Test
    func load_aSearch_sendsNoValidators() async throws {
        let sandbox = try Sandbox(serving: { _ in
            HTTPResponse(status: 200, headers: [HTTPHeader("ETag", #""page""#)], body: Data(Feeds.verses.utf8))
        })
        for now in [Day.dec1, Day.dec2] {
            let result = try await sandbox.cachelog(
                "--now", now, "load", sandbox.url("/verses?q={query}"), "--contract", "verses", "--query", "word")
            #expect(result.status == ExitCode.ok, "\(result)")
        }
        #expect(sandbox.server.requests.map { $0.header("If-None-Match") } == [nil, nil])
    }

    /// Validators vouch for the URL they came with: a key loaded from another URL asks it for the
    /// whole feed, even when that server would answer "not modified" to the old ETag.
    @Test
    func load_ofAKeyFromANewURL_sendsNoValidators_andCachesTheNewFeed() async throws {
        let asked = Locked([String: [String?]]())
        let sandbox = try Sandbox(serving: { request in
            asked.withLock { $0[request.path, default: []].append(request.header("If-None-Match")) }
            if request.header("If-None-Match") == #""same""# { return HTTPResponse(status: 304, headers: [HTTPHeader("ETag", #""same""#)]) }
            let body = request.path == "/a.json" ? #"{"items":["from a"]}"# : #"{"items":["from b"]}"#
            return HTTPResponse(status: 200, headers: [HTTPHeader("ETag", #""same""#)], body: Data(body.utf8))
        })
        let first = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/a.json"), "--key", "k", "--format", "json")
        #expect(first.status == ExitCode.ok, "\(first)")
        let second = try await sandbox.cachelog("--now", Day.dec2, "load", sandbox.url("/b.json"), "--key", "k", "--format", "json")
        #expect(second.status == ExitCode.ok, "\(second)")
        #expect(try second.json()["revalidated"] as? Bool == false, "\(second)")
        #expect(second.stdout.contains("from b") && !second.stdout.contains("from a"), "\(second)")
        #expect(asked.withLock { $0["/b.json"] } == [nil])
        // Asked again, /b.json gets its own validators.
        _ = try await sandbox.cachelog("--now", Day.dec3, "load", sandbox.url("/b.json"), "--key", "k")
        #expect(asked.withLock { $0["/b.json"] } == [nil, #""same""#])
    }

    /// A validator too long to keep is dropped, not a reason to fail the save: the feed is cached
    /// and the next load asks for the whole feed.
    @Test
    func load_withAnETagTooLongToKeep_cachesTheFeed_andAsksForItWholeNextTime() async throws {
        let huge = "\"" + String(repeating: "e", count: 70_000) + "\""
        let asked = Locked([String?]())
        let sandbox = try Sandbox(serving: { request in
            asked.withLock { $0.append(request.header("If-None-Match")) }
            return HTTPResponse(status: 200, headers: [HTTPHeader("ETag", huge)], body: Data(Feeds.films.utf8))
        })
        let first = try await load(sandbox, at: Day.dec1, "--format", "json")
        #expect(first.status == ExitCode.ok, "\(first)")
        #expect(try first.json()["cached"] as? Bool == true, "\(first)")
        let second = try await load(sandbox, at: Day.dec2)
        #expect(second.status == ExitCode.ok, "\(second)")
        #expect(asked.withLock { $0 } == [nil, nil])
        #expect(try await puts(sandbox).allSatisfy { $0.metadata["etag"] == nil })
    }

    @Test
    func loadHelp_saysWhichValidatorsAreSent() async throws {
        let sandbox = try Sandbox()
        let help = try await sandbox.run(["load", "--help"])
        let text = help.stdout.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
        #expect(text.contains("sends them back, verbatim, as If-None-Match and If-Modified-Since"), "\(help)")
        #expect(text.contains(#""revalidated""#))
    }
}
