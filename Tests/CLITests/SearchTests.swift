import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// Searches through the built `cachelog`: `load --query` and `--more` against a loopback server
/// that pages like the people and verse search APIs, the object cache, and `searches`.
@Suite("cachelog: searches, paging, the object cache and the search history", .hangGuard)
struct SearchTests {
    /// People pages: "sky" has two pages, "darth" one; each person has its own URL. Verses: two
    /// pages for any query, then an empty one.
    static func server() throws -> Sandbox {
        try Sandbox(serving: handler)
    }

    static let handler = api(linkingTo: nil)

    /// Links point at `root`, or back at this server (as the APIs' do) when it is nil.
    static func api(linkingTo root: URL?) -> LoopbackHTTPServer.Handler {
        let pages: [String: [[String]]] = ["sky": [["Luke"], ["Anakin", "Shmi"]], "darth": [["Vader"]], "": [["Everyone"]]]
        return { request in
            let root = root.map { $0.absoluteString } ?? "http://" + (request.header("Host") ?? "127.0.0.1")
            switch request.path {
            case "/api/people/":
                let query = request.queryValue("search") ?? ""
                let page = Int(request.queryValue("page") ?? "1") ?? 1
                let list = pages[query] ?? [[]]
                guard page <= list.count else { return .status(404) }
                let next = page < list.count ? "\"\(root)/api/people/?search=\(query)&page=\(page + 1)\"" : "null"
                let results = list[page - 1].map { #"{"name":"\#($0)","url":"\#(root)/api/people/\#($0.lowercased())/"}"# }
                return .json(#"{"count":\#(list.joined().count),"next":\#(next),"previous":null,"results":[\#(results.joined(separator: ","))]}"#)
            case let path where path.hasPrefix("/api/people/"):
                let name = path.dropFirst("/api/people/".count).dropLast()
                return .json(#"{"name":"\#(name.capitalized)","url":"\#(root)\#(path)"}"#)
            case "/verses":
                let page = Int(request.queryValue("page") ?? "1") ?? 1
                let text = request.queryValue("q") ?? ""
                return .json(page <= 2 ? #"[{"scripture":"John \#(page):1","distance":0.1,"text":"\#(text)"}]"# : "[]")
            default:
                return .status(404)
            }
        }
    }

    private func people(_ sandbox: Sandbox, _ query: String, at now: String = Day.dec1, _ extra: String...) async throws -> CLIResult {
        try await sandbox.run(
            ["--db", sandbox.db, "--now", now, "load", sandbox.url("/api/people/?search={query}"), "--contract", "people",
             "--query", query, "--format", "json"] + extra)
    }

    private func names(_ result: CLIResult) throws -> [String] {
        (try result.json()["items"] as? [[String: Any]] ?? []).compactMap { $0.string("name") }
    }

    @Test
    func query_fillsTheTemplate_keysTheCacheBySearch_andRecordsTheSearchPolicy() async throws {
        let sandbox = try Self.server()

        let loaded = try await people(sandbox, "sky")

        #expect(loaded.status == ExitCode.ok, "\(loaded)")
        #expect(try loaded.json().string("key") == "search:people:sky")
        #expect(try loaded.json()["more"] as? Bool == true)
        #expect(try names(loaded) == ["Luke"])
        #expect(sandbox.server.requests.map(\.target) == ["/api/people/?search=sky"])
        let put = try await sandbox.cachelog("replay", "--key", "search:people:sky", "--type", "put", "--format", "jsonl").jsonLines()
        #expect(put.first?.int("maxAge") == 30 * 86_400)
    }

    @Test
    func query_isPercentEncodedIntoTheURL_andTheEmptyQueryIsASearch() async throws {
        let sandbox = try Self.server()

        let verses = try await sandbox.cachelog(
            "--now", Day.dec1, "load", sandbox.url("/verses?q={query}&page={page}"), "--contract", "verses", "--query", "love & peace/?",
            "--format", "json")
        let everyone = try await people(sandbox, "")

        #expect(verses.status == ExitCode.ok, "\(verses)")
        #expect(sandbox.server.requests.first?.target == "/verses?q=love%20%26%20peace%2F%3F&page=1")
        #expect(try verses.json().string("key") == "search:verses:love & peace/?")
        #expect(everyone.status == ExitCode.ok, "\(everyone)")
        #expect(try names(everyone) == ["Everyone"])
        #expect(try everyone.json().string("key") == "search:people:")
    }

    @Test
    func more_loadsTheNextPage_andCachesTheMergedList_neverThePageAlone() async throws {
        let sandbox = try Self.server()
        _ = try await people(sandbox, "sky")

        let more = try await people(sandbox, "sky", at: "2026-12-01T10:01:00Z", "--more")

        #expect(more.status == ExitCode.ok, "\(more)")
        #expect(try names(more) == ["Luke", "Anakin", "Shmi"])
        #expect(try more.json()["more"] as? Bool == false, "the server said it was the last page")
        #expect(sandbox.server.requests.last?.target == "/api/people/?search=sky&page=2")
        // Offline, the merged list is what the cache serves.
        let offline = try await sandbox.run([
            "--db", sandbox.db, "--now", Day.dec2, "load", try deadURL(path: "/api/people/?search={query}"), "--contract", "people",
            "--query", "sky", "--format", "json",
        ])
        #expect(try offline.json().string("source") == "cache")
        #expect(try names(offline) == ["Luke", "Anakin", "Shmi"])
        // At the end, --more asks nothing and keeps the list.
        let atEnd = try await people(sandbox, "sky", at: Day.dec2, "--more")
        #expect(try names(atEnd) == ["Luke", "Anakin", "Shmi"])
        #expect(try atEnd.json().string("source") == "cache")
        #expect(sandbox.server.requestCount == 2)
    }

    @Test
    func more_offline_exitsThree_andLeavesTheCacheAsItWas() async throws {
        // The first page's link to the next one points at a server that is down.
        let sandbox = try Sandbox(serving: Self.api(linkingTo: try DeadPort.shared().baseURL))
        _ = try await people(sandbox, "sky")
        let before = try await sandbox.cachelog("replay", "--format", "jsonl")

        let offline = try await people(sandbox, "sky", at: Day.dec2, "--more")

        #expect(offline.status == ExitCode.noUsableData, "\(offline)")
        #expect(offline.stdout.isEmpty && offline.stderrLines.count == 1)
        #expect(offline.stderr.contains("the cache is as it was"))
        #expect(sandbox.server.requestCount == 1, "the next page was asked of the dead address only")
        #expect(try await sandbox.cachelog("replay", "--format", "jsonl").stdout == before.stdout)
    }

    @Test
    func more_forVerses_countsPagesUntilAnEmptyOne() async throws {
        let sandbox = try Self.server()
        let template = sandbox.url("/verses?q={query}&page={page}")
        func verses(_ extra: String...) async throws -> CLIResult {
            try await sandbox.run(["--db", sandbox.db, "--now", Day.dec1, "load", template, "--contract", "verses", "--query", "love", "--format", "json"] + extra)
        }

        _ = try await verses()
        let second = try await verses("--more")
        let third = try await verses("--more")

        #expect(sandbox.server.requests.map { $0.queryValue("page") } == ["1", "2", "3"])
        let scriptures = { (result: CLIResult) in (try result.json()["items"] as? [[String: Any]] ?? []).compactMap { $0.string("scripture") } }
        #expect(try scriptures(second) == ["John 1:1", "John 2:1"])
        #expect(try scriptures(third) == ["John 1:1", "John 2:1"], "an empty page ends the list and keeps it")
        #expect(try third.json()["more"] as? Bool == false)
    }

    @Test
    func aVersesURLWithoutPage_hasNoNextPage_soMoreNeverRepeatsTheFirst() async throws {
        let sandbox = try Self.server()
        func verses(_ extra: String...) async throws -> CLIResult {
            try await sandbox.run(
                ["--db", sandbox.db, "--now", Day.dec1, "load", sandbox.url("/verses?q={query}"), "--contract", "verses", "--query", "love",
                 "--format", "json"] + extra)
        }

        let first = try await verses()
        let more = try await verses("--more")

        #expect(try first.json()["more"] as? Bool == false)
        #expect((try more.json()["items"] as? [Any])?.count == 1)
        #expect(sandbox.server.requestCount == 1)
    }

    @Test
    func aPersonLoadedAlone_isCachedUnderItsURLOnly_whateverItsBodySays() async throws {
        let sandbox = try Sandbox(serving: { _ in .json(#"{"name":"Luke","url":"http://elsewhere.example/people/1/"}"#) })
        let url = sandbox.url("/api/people/1/")

        let loaded = try await sandbox.cachelog("--now", Day.dec1, "load", url, "--contract", "person", "--max-age", "90s")

        #expect(loaded.status == ExitCode.ok, "\(loaded)")
        let keys = try await sandbox.cachelog("replay", "--type", "put", "--format", "jsonl").jsonLines().compactMap { $0.string("key") }
        #expect(keys == ["object:" + url])
    }

    @Test
    func more_withoutACachedSearch_exitsThree() async throws {
        let sandbox = try Self.server()

        let more = try await people(sandbox, "sky", "--more")

        #expect(more.status == ExitCode.noUsableData, "\(more)")
        #expect(sandbox.server.requestCount == 0)
    }

    @Test
    func aPeopleSearch_cachesEachPerson_andLoadingOneAsksNothingWhileFresh() async throws {
        let sandbox = try Self.server()
        _ = try await people(sandbox, "darth")
        let url = sandbox.url("/api/people/vader/")

        let vader = try await sandbox.cachelog("--now", Day.dec2, "load", url, "--contract", "person", "--format", "json")

        #expect(vader.status == ExitCode.ok, "\(vader)")
        #expect(try vader.json().string("source") == "cache")
        #expect(try vader.json().string("key") == "object:" + url)
        #expect(try names(vader) == ["Vader"])
        #expect(sandbox.server.requestCount == 1, "only the search")
        // Once the object expires (30 days), loading it asks the remote.
        let later = try await sandbox.cachelog("--now", "2026-12-31T10:00:00Z", "load", url, "--contract", "person", "--format", "json")
        #expect(try later.json().string("source") == "remote")
        #expect(sandbox.server.requestCount == 2)
    }

    @Test
    func searches_listsPastQueriesNewestFirst_withWhenItemsAndFreshness() async throws {
        let sandbox = try Self.server()
        _ = try await people(sandbox, "sky", at: Day.dec1)
        _ = try await people(sandbox, "darth", at: Day.dec2)
        _ = try await sandbox.cachelog(
            "--now", Day.dec3, "load", sandbox.url("/verses?q={query}&page={page}"), "--contract", "verses", "--query", "love")

        let all = try await sandbox.cachelog("--now", "2026-12-31T11:00:00Z", "searches", "--format", "json")

        #expect(all.status == ExitCode.ok, "\(all)")
        let list = try all.jsonArray()
        #expect(list.map { "\($0.string("contract") ?? "?"):\($0.string("query") ?? "?")" } == ["verses:love", "people:darth", "people:sky"])
        #expect(list.compactMap { $0["fresh"] as? Bool } == [true, true, false], "sky was cached 30 days and an hour ago")
        #expect(list.compactMap { $0.int("items") } == [1, 1, 1])
        let last = try await sandbox.cachelog("searches", "--contract", "people", "--limit", "1", "--format", "json")
        #expect(try last.jsonArray().map { $0.string("query") } == ["darth"], "the last search, to show on launch")
    }

    @Test(arguments: [
        ["load", "https://example.com/?q={query}", "--contract", "films", "--query", "x"],
        ["load", "https://example.com/?q={query}", "--contract", "people", "--more"],
        ["load", "https://example.com/?q={query}", "--contract", "people"],
        ["load", "https://example.com/films.json"],
        ["load", "https://example.com/verses", "--contract", "verses", "--query", "love"],
        ["searches", "--contract", "films"],
        ["searches", "--limit", "-1"],
    ])
    func badSearchCommandLines_exitSixtyFour(arguments: [String]) async throws {
        let sandbox = try Self.server()

        let result = try await sandbox.run(["--db", sandbox.db] + arguments)

        #expect(result.status == ExitCode.usage, "\(result)")
    }
}
