import Foundation
import LoopbackHTTP
import TestSupport
import Testing

@Suite("cachelog load", .hangGuard)
struct LoadTests {
    @Test
    func load_online_printsAHeaderAndOneLinePerItem_andCachesWithOneDeleteAndPut() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stderr.isEmpty)
        #expect(result.stdoutLines == [
            "films: 2 items from remote, cached 2026-12-01T10:00:00Z (age 0s)",
            "  Castle in the Sky",
            "  My Neighbor Totoro",
        ])
        let replay = try await sandbox.cachelog("replay", "--format", "jsonl")
        #expect(try replay.jsonLines().map { $0.string("type") ?? "?" } == ["delete", "put"])
        #expect(sandbox.server.requests.map(\.path) == ["/films.json"])
    }

    /// A cache saved under one contract and asked for under another that it does not fit: the
    /// failure names the field, the item and the contract in words, not Swift's coding keys.
    @Test(arguments: [
        (#"[{"id":"2baf70d1-42bb-4437-b551-e5fed5a87abe","title":"a","description":"d","image":"https://example.com/a.jpg","url":"https://example.com/a"},{"title":"b"}]"#,
         #"item 1 has no "id""#),
        (#"[{"id":5,"title":"a","description":"d","image":"https://example.com/a.jpg","url":"https://example.com/a"}]"#,
         #""id" of item 0 is not a string"#),
        (#"[{"id":"2baf70d1-42bb-4437-b551-e5fed5a87abe","title":null,"description":"d","image":"https://example.com/a.jpg","url":"https://example.com/a"}]"#,
         #""title" of item 0 is null, not a string"#),
    ])
    func load_aCacheThatDoesNotDecodeUnderTheContract_saysWhichFieldOfWhichItemAndWhy(payload: String, says: String) async throws {
        let sandbox = try Sandbox(serving: LoopbackHTTPServer.routes(["/feed.json": .json(payload)]))
        let saved = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/feed.json"), "--key", "feed", "--contract", "json")
        try #require(saved.status == ExitCode.ok, "\(saved)")

        let dead = try deadURL()
        let offline = try await sandbox.cachelog("--now", Day.dec2, "load", dead, "--key", "feed", "--contract", "films")

        #expect(offline.status == ExitCode.noUsableData, "\(offline)")
        let port = try #require(URL(string: dead)?.port)
        #expect(offline.stderrLines.count == 1, "\(offline)")
        #expect(offline.stderrLines.first?.hasPrefix("cachelog: no usable data for feed: remote unreachable: Failed to connect to 127.0.0.1 port \(port): ") == true, "\(offline)")
        #expect(offline.stderrLines.first?.hasSuffix("; cache unreadable (The cached feed does not decode under contract films: \(says).)") == true, "\(offline)")
        #expect(!offline.stderr.contains("CodingKeys") && !offline.stderr.contains("DecodingError"))
    }

    static let contracts: [(contract: String, path: String, count: Int)] = [
        ("images", "/images.json", 1), ("films", "/films.json", 2), ("genres", "/genres.json", 3),
        ("verses", "/verses.json", 1), ("people", "/people.json", 2), ("json", "/any.json", 1),
    ]

    @Test(arguments: contracts)
    func load_eachContract_acceptsItsShape_andPrintsTheItemsAsJSON(contract: String, path: String, count: Int) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.cachelog(
            "--now", Day.dec1, "load", sandbox.url(path), "--key", contract, "--contract", contract, "--format", "json")
        #expect(result.status == ExitCode.ok, "\(result)")
        let json = try result.json()
        #expect(json.string("source") == "remote")
        #expect(json.string("key") == contract)
        #expect((json["items"] as? [Any])?.count == count)
    }

    @Test
    func load_aMissingFeed_saysTheHTTPStatus_inItsOneLine() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.cachelog("load", sandbox.url("/no-such-feed.json"), "--key", "genres", "--contract", "genres")
        #expect(result.status == ExitCode.noUsableData, "\(result)")
        #expect(result.stderrLines == ["cachelog: no usable data for genres: remote sent invalid data: HTTP status 404, not 200; no cache"])
    }

    @Test
    func load_aBodyOfTheWrongShape_saysWhereItBreaksTheContract() async throws {
        let sandbox = try Sandbox(serving: LoopbackHTTPServer.routes([
            "/genres.json": HTTPResponse(status: 200, body: Data(#"{"genres":{"id":1}}"#.utf8)),
        ]))
        let result = try await sandbox.cachelog("load", sandbox.url("/genres.json"), "--key", "genres", "--contract", "genres")
        #expect(result.status == ExitCode.noUsableData, "\(result)")
        #expect(result.stderrLines == [#"cachelog: no usable data for genres: remote sent invalid data: expected an array at "genres"; no cache"#])
    }

    @Test
    func load_bodyNotMatchingTheContract_withRetries_asksRetriesPlusOneTimes_andWithoutCacheExitsThree() async throws {
        let sandbox = try Sandbox()
        // A genres body where films are expected: invalid data, which is retried.
        let result = try await sandbox.cachelog("load", sandbox.url("/genres.json"), "--key", "films", "--contract", "films", "--retries", "2")
        #expect(result.status == ExitCode.noUsableData, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines == ["cachelog: no usable data for films: remote sent invalid data: expected an array at the top level; no cache"])
        #expect(sandbox.server.requestCount == 3)
    }

    @Test
    func load_nothingListeningAndNoCache_exitsThreeWithOneLine_andDoesNotRetryConnectionErrors() async throws {
        let sandbox = try Sandbox()
        let dead = try deadURL()
        let result = try await sandbox.cachelog("load", dead, "--key", "films", "--contract", "films", "--retries", "3")
        #expect(result.status == ExitCode.noUsableData, "\(result)")
        #expect(result.stdout.isEmpty)
        // The transport's cause, with the host and port it could not reach, without its timing.
        let port = try #require(URL(string: dead)?.port)
        #expect(result.stderrLines == ["cachelog: no usable data for films: remote unreachable: Failed to connect to 127.0.0.1 port \(port): Couldn't connect to server; no cache"])
    }

    @Test
    func load_nothingListeningWithAFreshCache_servesTheCache() async throws {
        let sandbox = try Sandbox()
        let online = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        #expect(online.status == ExitCode.ok, "\(online)")
        let offline = try await sandbox.cachelog("--now", Day.dec2, "load", try deadURL(), "--key", "films", "--contract", "films")
        #expect(offline.status == ExitCode.ok, "\(offline)")
        #expect(offline.stdoutLines.first == "films: 2 items from cache, cached 2026-12-01T10:00:00Z (age 1d)")
    }

    @Test
    func load_eachKeyIsItsOwnCache() async throws {
        let sandbox = try Sandbox()
        _ = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "search:totoro", "--contract", "films")
        sandbox.server.setHandler { _ in .status(500) }
        let other = try await sandbox.cachelog("--now", Day.dec2, "load", sandbox.url("/films.json"), "--key", "search:laputa", "--contract", "films")
        #expect(other.status == ExitCode.noUsableData, "\(other)")
        let same = try await sandbox.cachelog("--now", Day.dec2, "load", sandbox.url("/films.json"), "--key", "search:totoro", "--contract", "films", "--format", "json")
        #expect(same.status == ExitCode.ok, "\(same)")
        #expect(try same.json().string("source") == "cache")
    }
}
