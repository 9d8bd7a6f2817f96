import Foundation
import LoopbackHTTP
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A port on 127.0.0.1 that refuses every connection for as long as this value lives: the address
/// of a remote that is down. ``shared()`` is one for the whole test run of the process.
///
/// A socket holds the port, bound and never listening: the system refuses
/// a connection to it, and no other socket can take the port meanwhile. Starting a server and
/// stopping it to free its port is not the same: another server (another test, another process)
/// can be given the freed port before the test connects, and the "dead" address answers.
public final class DeadPort: Sendable {
    /// The port number.
    public let port: Int
    /// Closed when the value goes; the shared one never goes, so its port stays taken until the
    /// process exits.
    private let fd: Int32

    /// The dead port of this process, taken at the first call.
    public static func shared() throws -> DeadPort {
        try sharedPort.get()
    }

    private static let sharedPort = Result { try DeadPort() }

    /// A port of its own, refused for as long as this value lives.
    public init() throws {
        do {
            (fd, port) = try LoopbackSocket.bound()
        } catch LoopbackHTTPServerError.socket(let call, let code) {
            throw DeadPortError(call: call, errno: code)
        }
    }

    deinit { _ = close(fd) }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { url("") }

    /// `SCHEME://127.0.0.1:PORT` followed by `path`.
    public func url(_ path: String = "/feed", scheme: String = "http") -> URL {
        // The literal is always valid, but URL(string:) is optional.
        URL(string: "\(scheme)://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }
}

/// A socket call that failed while taking the port.
struct DeadPortError: Error, CustomStringConvertible {
    let call: String
    let errno: Int32

    init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    var description: String { "holding a dead port on 127.0.0.1: \(call) failed: \(String(cString: strerror(errno)))" }
}
