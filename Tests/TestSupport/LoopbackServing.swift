import Foundation
import LoopbackHTTP

/// Starts a loopback server with `handler`, runs `body`, and always stops the server.
@discardableResult
public func withServer<T>(
    _ handler: @escaping LoopbackHTTPServer.Handler,
    _ body: (LoopbackHTTPServer, URL) async throws -> T
) async throws -> T {
    let server = LoopbackHTTPServer(handler: handler)
    let baseURL = try server.start()
    defer { server.stop() }
    return try await body(server, baseURL)
}

/// The bytes of `text`, as a server sends them.
public func json(_ text: String) -> Data { Data(text.utf8) }

/// The error thrown by `body` run in its own unstructured task, or `nil` when it returns.
///
/// Tests of cancellation cancel that task from inside; cancelling the test's own task instead
/// would make Swift Testing report the test as cancelled rather than run its expectations.
public func errorFromOwnTask<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async -> (any Error)? {
    await caughtError { try await Task { try await body() }.value }
}

/// Cancels the task that calls it (the code under test then sees `Task.isCancelled`).
public func cancelCurrentTask() {
    withUnsafeCurrentTask { $0?.cancel() }
}
