import Foundation
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
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw DeadPortError(call: "socket", errno: errno) }
        #if !canImport(Glibc)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        #endif
        // No SO_REUSEADDR or SO_REUSEPORT: either would let another socket that sets it bind the port too.
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw DeadPortError(call: "bind", errno: errno, closing: fd) }
        var named = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let gotName = withUnsafeMutablePointer(to: &named) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard gotName == 0 else { throw DeadPortError(call: "getsockname", errno: errno, closing: fd) }
        self.fd = fd
        port = Int(UInt16(bigEndian: named.sin_port))
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

    /// The error of `call`, after closing the socket `fd` it left unusable.
    init(call: String, errno: Int32, closing fd: Int32? = nil) {
        self.call = call
        self.errno = errno
        if let fd { _ = close(fd) }
    }

    var description: String { "holding a dead port on 127.0.0.1: \(call) failed: \(String(cString: strerror(errno)))" }
}
