import FeedAPI
import Foundation
import Logging
import LoopbackHTTP
import TestSupport
import Testing

// Shared fixtures. Every test builds its own server and client, so tests can run in parallel.

/// In these tests `HTTPResponse` is what the loopback server sends; what a client delivers is
/// spelled `FeedAPI.HTTPResponse`.
typealias HTTPResponse = LoopbackHTTP.HTTPResponse

let anyURL = URL(string: "http://a-url.test/resource") ?? URL(fileURLWithPath: "/")

func response(_ status: Int, url: URL = anyURL, headers: [String: String] = [:]) -> FeedAPI.HTTPResponse {
    FeedAPI.HTTPResponse(url: url, statusCode: status, headerFields: headers)
}

/// An `HTTPClient` that answers with a canned result, for loader unit tests.
struct HTTPClientStub: HTTPClient {
    let answer: @Sendable (URL) async throws -> (Data, FeedAPI.HTTPResponse)

    static func success(_ data: Data, status: Int) -> HTTPClientStub {
        HTTPClientStub { url in (data, response(status, url: url)) }
    }

    static func failure(_ error: any Error) -> HTTPClientStub {
        HTTPClientStub { _ in throw error }
    }

    func get(from url: URL) async throws -> (Data, FeedAPI.HTTPResponse) {
        try await answer(url)
    }
}

/// A swift-log handler that keeps messages in memory.
struct CapturingLogHandler: LogHandler {
    final class Store: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [(Logger.Level, String)] = []

        func append(_ level: Logger.Level, _ message: String) {
            lock.lock(); defer { lock.unlock() }
            entries.append((level, message))
        }

        var messages: [(level: Logger.Level, message: String)] {
            lock.lock(); defer { lock.unlock() }
            return entries.map { (level: $0.0, message: $0.1) }
        }
    }

    let store: Store
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        store.append(event.level, event.message.description)
    }
}

func capturingLogger() -> (Logger, CapturingLogHandler.Store) {
    let store = CapturingLogHandler.Store()
    let logger = Logger(label: "test") { _ in CapturingLogHandler(store: store) }
    return (logger, store)
}
