import CacheLogKit
import Foundation
import LoopbackHTTP
import TestSupport

/// In these specs `HTTPResponse` is what the loopback server sends (FeedAPI has one too, for what
/// a client received).
typealias HTTPResponse = LoopbackHTTP.HTTPResponse

/// One app's world for the entry point: a loopback server whose routes a spec changes, a
/// database directory of its own (not created: the client creates it on its first save), and a
/// clock the spec moves.
final class ClientWorld: Sendable {
    let server: LoopbackHTTPServer
    let baseURL: URL
    let clock = TestClock(Date(timeIntervalSince1970: 1_796_119_200))  // 2026-12-01T10:00:00Z
    private let directory: TemporaryDirectory
    let path: String

    init(routes: [String: HTTPResponse] = [:]) throws {
        server = LoopbackHTTPServer(routes: routes)
        baseURL = try server.start()
        directory = try TemporaryDirectory(prefix: "cachelog-kit")
        path = directory.path("db")
    }

    deinit { server.stop() }

    func url(_ path: String) -> URL { baseURL.appendingPathComponent(String(path.drop { $0 == "/" })) }

    /// A URL template on this server (`{query}` and `{page}` kept).
    func template(_ path: String) -> String { baseURL.absoluteString + path }

    func serve(_ routes: [String: HTTPResponse]) { server.setHandler(LoopbackHTTPServer.routes(routes)) }

    /// A client on this world's database; on the world's clock unless `options` has a clock of
    /// its own (`ownClock`).
    func client(_ options: CacheClient.Options = CacheClient.Options(), ownClock: Bool = false) throws -> CacheClient {
        var options = options
        if !ownClock { options.clock = clock.function }
        options.durability = .unsynced
        return try CacheClient(directory: path, options: options)
    }

    func days(_ days: Double) { clock.advance(days * 86_400) }
}

enum Bodies {
    static let films = """
        [{"id":"2baf70d1-42bb-4437-b551-e5fed5a87abe","title":"Castle in the Sky","description":"Sheeta and Pazu","image":"https://example.com/laputa.jpg","url":"https://example.com/films/2baf70d1"},
         {"id":"58611129-2dbc-4a81-a72f-77ddfc1b1b49","title":"My Neighbor Totoro","description":"Two sisters","image":"https://example.com/totoro.jpg","url":"https://example.com/films/58611129"}]
        """
    static let genres = #"{"genres":[{"id":1,"name":"Comedy"},{"id":2,"name":"News"}]}"#

    static func people(_ names: [String], next: String?, base: URL, idBase: Int = 1) -> String {
        let results = names.enumerated().map { index, name in
            #"{"name":"\#(name)","url":"\#(base.absoluteString)/people/\#(idBase + index).json"}"#
        }
        let nextText = next.map { "\"\($0)\"" } ?? "null"
        return #"{"count":\#(names.count),"next":\#(nextText),"previous":null,"results":[\#(results.joined(separator: ","))]}"#
    }

    static func verses(_ scriptures: [String]) -> String {
        "[" + scriptures.map { #"{"scripture":"\#($0)","distance":0.1,"text":"t"}"# }.joined(separator: ",") + "]"
    }
}

extension ClientWorld {
    /// Runs the built `cachelog` binary on this world's database, as another process would, at
    /// `now`; returns its exit status and stdout.
    func cachelog(_ arguments: String..., now: String) async throws -> (status: Int32, stdout: String, stderr: String) {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "CACHELOG_DB")
        environment.removeValue(forKey: "CACHELOG_NOW")
        let result = try await ChildProcess.run(
            try builtProduct("cachelog"), ["--db", path, "--now", now] + arguments, environment: environment, timeout: .seconds(60))
        return (result.status, result.stdoutText, result.stderrText)
    }

    /// The clock's date, as the tool's --now takes it.
    var now: String { TimestampText.string(clock.date) }
}
