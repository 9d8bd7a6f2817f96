import CacheLog
import CacheLogKit
import FeedAPI
import FeedCache
import Foundation
import Locking
import LoopbackHTTP
import TestSupport
import Testing

// What every acceptance story stands on: a real HTTP server on 127.0.0.1, the real libcurl
// client, a real CacheLog database in a directory of its own, and a clock the story moves: the
// clock of the app's `CacheClient`, and so of the log's own stamps too. Each test builds its own
// `AppEnvironment`, so the stories run in parallel.

/// In these stories `HTTPResponse` is what the loopback server sends (FeedAPI has one too, for
/// what a client received).
typealias HTTPResponse = LoopbackHTTP.HTTPResponse

/// One app's world: its server, its network client, its database and its clock.
final class AppEnvironment: Sendable {
    let server: LoopbackHTTPServer
    let baseURL: URL
    let client: AppNetwork
    /// The app's entry point on the database, with the story's clock and network.
    let cache: CacheClient
    /// The database's log (the client's own instance): the stories that compose the parts
    /// underneath build their stores on it.
    let log: EventLog
    let clock: TestClock
    private let directory: URL

    /// Starts a server answering with `handler` and opens an empty database.
    init(serving handler: @escaping LoopbackHTTPServer.Handler) throws {
        server = LoopbackHTTPServer(handler: handler)
        baseURL = try server.start()
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("cachelog-acceptance-\(UUID().uuidString)")
        let (clock, client) = (TestClock(TestClock.start), AppNetwork())
        (self.clock, self.client) = (clock, client)
        cache = try CacheClient(directory: directory.path, options: CacheClient.Options(clock: clock.function, http: client))
        log = try cache.log()
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// `baseURL` followed by `path` (which may carry a query string).
    func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + path) ?? baseURL
    }

    /// A URL template on this server: `baseURL` followed by `path`, its `{query}` and `{page}` kept.
    func template(_ path: String) -> String {
        baseURL.absoluteString + path
    }

    /// Answers requests from now on with `handler`.
    func serve(_ handler: @escaping LoopbackHTTPServer.Handler) {
        server.setHandler(handler)
    }

    /// Takes the app offline the way `offline` says.
    func goOffline(_ offline: Offline = .connectionRefused) {
        switch offline {
        case .serverError: server.setHandler { _ in .status(500) }
        case .invalidJSON: server.setHandler { _ in .json("{ not json") }
        case .connectionRefused: client.goDown()
        }
    }

    /// The whole log, as (kind, key, reason / timestamp / maxAge). A corrupt record fails the test.
    func loggedEvents() throws -> [LoggedEvent] {
        try log.events().compactMap { item in
            switch item {
            case .event(let event):
                return LoggedEvent(event)
            case .corrupt(let seq, let detail):
                Issue.record("corrupt record \(seq): \(detail)")
                return nil
            }
        }
    }
}

/// The app's network: the real `URLSessionHTTPClient`. Once it goes down, every request goes to
/// a port on 127.0.0.1 that refuses connections for the whole run (``DeadPort``), so the app's
/// connection is refused for real. Stopping the server instead would free its port, which another
/// server of the run could be given and answer from.
final class AppNetwork: HTTPClient {
    private let client = CurlHTTPClient(userAgent: "cachelog-tests/1")
    private let isDown = Locked(false)

    /// From now on, every connection is refused.
    func goDown() {
        isDown.withLock { $0 = true }
    }

    func get(from url: URL) async throws -> (Data, FeedAPI.HTTPResponse) {
        try await client.get(from: try route(url))
    }

    func get(from url: URL, headers: [String: String]) async throws -> (Data, FeedAPI.HTTPResponse) {
        try await client.get(from: try route(url), headers: headers)
    }

    /// `url`, or once down the same URL on the dead port.
    private func route(_ url: URL) throws -> URL {
        guard isDown.withLock({ $0 }), var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.port = try DeadPort.shared().port
        return components.url ?? url
    }
}

/// The ways a story's server stops being useful.
enum Offline: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// The server answers `500 Internal Server Error` (an invalid-data error for the app).
    case serverError
    /// The server answers 200 with a body that is not JSON (an invalid-data error).
    case invalidJSON
    /// The remote is down: the connection is refused (a connectivity error).
    case connectionRefused

    var testDescription: String { rawValue }
}

/// The injected clock of a story: starts at ``TestClock/start`` and moves only when told.
extension TestClock {
    /// A whole second in UTC, so that stored timestamps round-trip exactly.
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// Moves the clock to `days` days (plus `seconds`) after `date`.
    func set(_ days: Int, daysAfter date: Date, plusSeconds seconds: Int = 0) {
        set(date.addingTimeInterval(TimeInterval(days * 86_400 + seconds)))
    }
}

/// An event of the log, reduced to what a story asserts: kind, key, and reason / timestamp / maxAge.
enum LoggedEvent: Equatable, CustomStringConvertible {
    case put(String, timestamp: Date)
    case delete(String, reason: Event.DeletionReason)
    case expire(String, timestamp: Date, maxAge: TimeInterval)

    /// What a save appends: `delete(replaced)` + `put(timestamp)`, one atomic batch.
    static func save(_ key: String, at timestamp: Date) -> [LoggedEvent] {
        [.delete(key, reason: .replaced), .put(key, timestamp: timestamp)]
    }

    init?(_ event: RecordedEvent) {
        switch event.kind {
        case .put:
            guard let timestamp = event.timestamp else { return nil }
            self = .put(event.key, timestamp: timestamp)
        case .delete:
            guard let reason = event.reason else { return nil }
            self = .delete(event.key, reason: reason)
        case .expire:
            guard let timestamp = event.timestamp, let maxAge = event.maxAge else { return nil }
            self = .expire(event.key, timestamp: timestamp, maxAge: maxAge)
        case .retention:
            return nil
        }
    }

    var description: String {
        switch self {
        case let .put(key, timestamp): "put(\(key), \(timestamp))"
        case let .delete(key, reason): "delete(\(key), \(reason.name))"
        case let .expire(key, timestamp, maxAge): "expire(\(key), \(timestamp), maxAge: \(maxAge))"
        }
    }
}

/// Seconds in `days` days, as an `expire` event records a maximum age.
func days(_ days: Int) -> TimeInterval { TimeInterval(days * 86_400) }

/// Expects `error` to be the fallback composite's ``NoUsableFeedError``, the remote having failed
/// with `remoteError` and the cache with `cacheError`; `strategy` says which was asked first.
func expectNoUsableFeed(
    _ error: (any Error)?,
    remote remoteError: RemoteLoaderError,
    cache cacheError: CacheUnavailableError,
    strategy: CacheStrategy = .remoteFirst,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let error = error as? NoUsableFeedError else {
        Issue.record("expected NoUsableFeedError, got \(String(describing: error))", sourceLocation: sourceLocation)
        return
    }
    let (remote, cache) = strategy == .remoteFirst ? (error.primaryError, error.fallbackError) : (error.fallbackError, error.primaryError)
    expectCauses(remote: remote, cache: cache, are: remoteError, cacheError, sourceLocation: sourceLocation)
}

/// Expects `error` to be the entry point's ``NoUsableDataError`` for `key`, the remote having
/// failed with `remoteError` and the cache with `cacheError`, in a sentence that names both.
func expectNoUsableData(
    _ error: (any Error)?,
    key: String,
    remote remoteError: RemoteLoaderError,
    cache cacheError: CacheUnavailableError,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let error = error as? NoUsableDataError else {
        Issue.record("expected NoUsableDataError, got \(String(describing: error))", sourceLocation: sourceLocation)
        return
    }
    #expect(error.key == key, sourceLocation: sourceLocation)
    #expect(error.description.hasPrefix("no usable data for \(key): remote "), "\(error)", sourceLocation: sourceLocation)
    expectCauses(remote: error.remoteError, cache: error.cacheError, are: remoteError, cacheError, sourceLocation: sourceLocation)
}

private func expectCauses(
    remote: (any Error)?, cache: any Error, are remoteError: RemoteLoaderError, _ cacheError: CacheUnavailableError,
    sourceLocation: SourceLocation
) {
    #expect(remote as? RemoteLoaderError == remoteError, sourceLocation: sourceLocation)
    #expect(cache as? CacheUnavailableError == cacheError, sourceLocation: sourceLocation)
}

extension SearchResource {
    /// This search asking the cache alone: what its cache holds now, with no request.
    var cacheOnly: SearchResource {
        var resource = self
        resource.strategy = .cacheOnly
        return resource
    }
}

/// Serves `routes` by path (query ignored), 404 elsewhere.
func routes(_ routes: [String: HTTPResponse]) -> LoopbackHTTPServer.Handler {
    LoopbackHTTPServer.routes(routes)
}

/// `object` as JSON bytes, for sample payloads written against a contract's field names.
func jsonData(_ object: Any) -> Data {
    (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
}
