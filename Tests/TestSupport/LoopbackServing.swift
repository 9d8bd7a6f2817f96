import Foundation
import LoopbackHTTP

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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

/// A port on 127.0.0.1 that refuses connections for as long as this value lives: a socket is bound
/// to it and never listens, so no other test (or process) can take the port meanwhile.
public final class RefusingPort: @unchecked Sendable {
    private let fd: Int32
    /// The port number.
    public let port: Int

    public init() throws {
        #if canImport(Darwin)
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            let code = errno
            _ = close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { _ = close(fd) }

    /// `http://127.0.0.1:PORT` followed by `path`.
    public func url(_ path: String = "/feed", scheme: String = "http") -> URL {
        URL(string: "\(scheme)://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }
}
