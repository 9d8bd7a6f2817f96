import FeedAPI
import Foundation
import LoopbackHTTP
import TestSupport
import Testing
@testable import cachelog

/// `--contract json` caches any JSON, and gives it back exactly as the server sent it: numbers of
/// any size and precision as written, string escapes as written, unicode untouched.
@Suite("cachelog load --contract json: exact values", .hangGuard)
struct ExactJSONTests {
    /// Numbers a `Double` changes (2^53 + 1, 30 digits, 2^64, a trailing zero, an exponent out of
    /// range), escapes a decoder would unescape, and characters outside the BMP.
    static let elements = [
        #"{"id":9007199254740993,"big":123456789012345678901234567890,"price":1.10,"exp":2.5E+10,"tiny":1e-400,"huge":1E400,"neg":-0.0,"s":"caf\u00e9 \"q\" \/ \n\t","u":"café ☕ 𝄞","nested":[1,[2,[3,{}]],[]],"t":true,"f":false,"n":null}"#,
        "18446744073709551616", #""plain""#, "-12.50e-3",
    ]
    static let body = "[" + elements.joined(separator: ",") + "]"

    @Test
    func load_json_deliversTheServersBytes_online_offline_andInTheReplay() async throws {
        let sandbox = try Sandbox(serving: LoopbackHTTPServer.routes(["/exact.json": .json(Self.body)]))

        let online = try await sandbox.cachelog(
            "--now", Day.dec1, "load", sandbox.url("/exact.json"), "--key", "exact", "--contract", "json", "--format", "json")
        #expect(online.status == ExitCode.ok, "\(online)")
        #expect(online.stdout == #"{"source":"remote","key":"exact","cached":true,"revalidated":false,"timestamp":"2026-12-01T10:00:00Z","age":0,"items":"# + Self.body + "}\n")

        sandbox.server.setHandler { _ in .status(500) }
        let offline = try await sandbox.cachelog(
            "--now", Day.dec2, "load", sandbox.url("/exact.json"), "--key", "exact", "--contract", "json", "--format", "json")
        #expect(offline.status == ExitCode.ok, "\(offline)")
        #expect(offline.stdout == #"{"source":"cache","key":"exact","cached":true,"revalidated":false,"timestamp":"2026-12-01T10:00:00Z","age":86400,"items":"# + Self.body + "}\n")

        let text = try await sandbox.cachelog("--now", Day.dec2, "load", sandbox.url("/exact.json"), "--key", "exact", "--contract", "json")
        #expect(text.status == ExitCode.ok, "\(text)")
        // No title or name to show: each item is printed as its JSON.
        #expect(Array(text.stdoutLines.dropFirst()) == Self.elements.map { "  " + $0 })

        let jsonl = try await sandbox.cachelog("replay", "--payload", "--type", "put", "--format", "jsonl")
        #expect(jsonl.status == ExitCode.ok, "\(jsonl)")
        #expect(jsonl.stdoutLines.count == 1)
        #expect(jsonl.stdoutLines.first?.hasSuffix(#","payload":"# + Self.body + "}") == true, "\(jsonl.stdout)")

        let replay = try await sandbox.cachelog("replay", "--payload", "--type", "put")
        #expect(replay.status == ExitCode.ok, "\(replay)")
        #expect(replay.stdoutLines.last == "        payload: " + Self.body)
    }

    @Test
    func load_json_dropsOnlyTheWhitespaceBetweenTokens_soEveryReplayLineStaysOneJSONLine() async throws {
        let pretty = """
            [
              { "name" : "a b",  "n" : 1.50 },
              \t 9007199254740993 ,
              "line\\nbreak"
            ]\r\n
            """
        let compact = #"[{"name":"a b","n":1.50},9007199254740993,"line\nbreak"]"#
        let sandbox = try Sandbox(serving: LoopbackHTTPServer.routes(["/pretty.json": .json(pretty)]))

        let online = try await sandbox.cachelog(
            "--now", Day.dec1, "load", sandbox.url("/pretty.json"), "--key", "pretty", "--contract", "json", "--format", "json")
        #expect(online.status == ExitCode.ok, "\(online)")
        #expect(online.stdout.hasSuffix(#","items":"# + compact + "}\n"), "\(online.stdout)")

        let jsonl = try await sandbox.cachelog("replay", "--payload", "--format", "jsonl")
        #expect(jsonl.status == ExitCode.ok, "\(jsonl)")
        let lines = try jsonl.jsonLines()
        #expect(lines.map { $0.string("type") } == ["delete", "put"])
        #expect(jsonl.stdoutLines.last?.hasSuffix(#","payload":"# + compact + "}") == true, "\(jsonl.stdout)")
    }

    @Test(arguments: [
        "", "[", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "1e", "+1", "NaN", "Infinity", "[1 2]", "\"tab\there\"",
        "\"\\x\"", "\"\\u12\"", "tru", "nul", "{1:2}", "[1]]", "\"unterminated",
    ])
    func jsonScanner_refusesWhatIsNotJSON(_ text: String) {
        #expect(JSONScanner.scan(Array(text.utf8)) == nil, "accepted \(text)")
    }

    @Test
    func jsonScanner_refusesInvalidUTF8_andNestingPastTheLimit() {
        #expect(JSONScanner.scan([UInt8(ascii: "\""), 0xC3, 0x28, UInt8(ascii: "\"")]) == nil)
        let deep = String(repeating: "[", count: JSONScanner.maximumDepth + 1) + String(repeating: "]", count: JSONScanner.maximumDepth + 1)
        #expect(JSONScanner.scan(Array(deep.utf8)) == nil)
        let deepest = String(repeating: "[", count: JSONScanner.maximumDepth) + String(repeating: "]", count: JSONScanner.maximumDepth)
        #expect(JSONScanner.scan(Array(deepest.utf8))?.compact == Array(deepest.utf8))
    }

    @Test
    func jsonScanner_keepsEveryTokenAndFindsTheTopLevelElements() throws {
        let scanned = try #require(JSONScanner.scan(Array(#" [ 1.0 , {"a" : [ 2 ] } , "x\"y" ] "#.utf8)))
        #expect(String(decoding: scanned.compact, as: UTF8.self) == #"[1.0,{"a":[2]},"x\"y"]"#)
        #expect(scanned.elements?.map { String(decoding: scanned.compact[$0], as: UTF8.self) } == ["1.0", #"{"a":[2]}"#, #""x\"y""#])
        #expect(JSONScanner.scan(Array("  42 ".utf8))?.elements == nil)
        #expect(JSONScanner.scan(Array("[]".utf8))?.elements == [])
    }
}
