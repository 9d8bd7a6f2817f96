#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

import Dispatch
import Locking

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A tiny HTTP/1.1 server on `127.0.0.1` and an ephemeral port, for tests and the `cachelog demo`.
///
/// Each connection carries one request (`Connection: close`) and is served on its own thread,
/// so a delayed response never blocks other clients. The handler can be swapped at any time
/// (``setHandler(_:)``), which lets a test turn a healthy server into one that fails.
///
/// ```swift
/// let server = LoopbackHTTPServer(routes: ["/films": .json(filmsJSON)])
/// let baseURL = try server.start()
/// defer { server.stop() }
/// ```
///
/// A server starts once. ``stop()`` wakes every waiting thread, waits for them to finish and
/// releases the port; it is also called when the server is deinitialised.
public final class LoopbackHTTPServer: Sendable {
    /// Answers a request. Called on a connection thread; it may block that connection only.
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    private let core: ServerCore

    /// Creates a stopped server that answers every request with `handler`.
    public init(handler: @escaping Handler = { _ in .notFound }) {
        core = ServerCore(handler: handler)
    }

    /// Creates a stopped server that answers requests whose path (without query) is a key of
    /// `routes`, and `404 Not Found` otherwise.
    public convenience init(routes: [String: HTTPResponse]) {
        self.init(handler: Self.routes(routes))
    }

    deinit {
        core.stop()
    }

    /// A handler that looks the request path (without query) up in `routes`; `404` when absent.
    public static func routes(_ routes: [String: HTTPResponse]) -> Handler {
        { request in routes[request.path] ?? .notFound }
    }

    /// Binds `127.0.0.1` on a port chosen by the system and starts accepting connections.
    ///
    /// - Returns: The base URL, for example `http://127.0.0.1:49152`.
    /// - Throws: ``LoopbackHTTPServerError`` when the server was already started or a socket call fails.
    @discardableResult
    public func start() throws -> URL {
        try core.start()
    }

    /// Stops accepting connections, cuts short pending delays, closes open connections, waits
    /// (at most a few seconds) for every server thread to finish, and releases the port.
    /// Safe to call more than once.
    public func stop() {
        core.stop()
    }

    /// Replaces the handler used for requests that arrive from now on.
    public func setHandler(_ handler: @escaping Handler) {
        core.withState { $0.handler = handler }
    }

    /// The port the server listens on, or `nil` before ``start()``.
    public var port: Int? {
        core.withState { $0.port }
    }

    /// `http://127.0.0.1:<port>`, or `nil` before ``start()``.
    public var baseURL: URL? {
        port.flatMap { URL(string: "http://127.0.0.1:\($0)") }
    }

    /// Every request received so far, in arrival order (recorded before the handler runs).
    public var requests: [HTTPRequest] {
        core.withState { $0.requests }
    }

    /// The number of requests received so far.
    public var requestCount: Int {
        core.withState { $0.requests.count }
    }

    /// Waits until at least `count` requests have arrived, polling so that no thread is blocked.
    ///
    /// - Returns: `true` when they arrived, `false` after `timeout` or if the task is cancelled.
    ///   It returns as soon as they arrive, so the generous default only matters on a machine
    ///   whose two cores are busy with a whole test suite running in parallel beside other load
    ///   (seen: 15 s at a load average of 6, more at 40).
    public func waitForRequests(count: Int, timeout: Duration = .seconds(300)) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while requestCount < count {
            guard clock.now < deadline else { return false }
            do {
                try await Task.sleep(for: .milliseconds(5))
            } catch {
                return false
            }
        }
        return true
    }
}

/// Why the server could not start.
public enum LoopbackHTTPServerError: Error, Equatable, CustomStringConvertible {
    /// ``LoopbackHTTPServer/start()`` was called on a server that was already started (or stopped).
    case alreadyStarted
    /// A socket system call failed; `errno` is the C error number.
    case socket(operation: String, errno: Int32)

    /// A readable explanation, including the C error message for socket failures.
    public var description: String {
        switch self {
        case .alreadyStarted:
            "the loopback HTTP server was already started; create a new server instead"
        case let .socket(operation, code):
            "loopback HTTP server: \(operation) failed: \(String(cString: strerror(code)))"
        }
    }
}

// MARK: - Implementation

/// The state shared by the public wrapper and the server threads.
///
/// Threads capture the core, never the public server, so that dropping the server runs its
/// `deinit`, which stops the threads. All mutable state is guarded by `condition`, which also
/// lets delayed responses sleep until either their deadline or `stop()`.
private final class ServerCore: @unchecked Sendable {
    struct State {
        enum Phase { case idle, running, stopping, stopped }
        var phase = Phase.idle
        var handler: LoopbackHTTPServer.Handler
        var port: Int?
        var requests: [HTTPRequest] = []
        /// Connection sockets still open; `stop()` shuts them down to wake blocked reads.
        var openConnections: Set<Int32> = []
        /// The write end of the pipe that wakes the accept loop. Owned by `stop()`.
        var wakeWriteFD: Int32 = -1
    }

    private let condition = Condition()
    private var state: State
    /// Every server thread is a member while it runs, so `stop()` can wait for all of them.
    private let threads = DispatchGroup()

    /// Requests larger than this are refused by closing the connection: it is a test server.
    private static let maxHeaderBytes = 64 * 1024
    private static let maxRequestBodyBytes = 1024 * 1024
    /// A silent client must not pin a thread forever.
    private static let receiveTimeoutSeconds = 10

    init(handler: @escaping LoopbackHTTPServer.Handler) {
        state = State(handler: handler)
    }

    func withState<T>(_ body: (inout State) throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body(&state)
    }

    func start() throws -> URL {
        try withState { state in
            guard state.phase == .idle else { throw LoopbackHTTPServerError.alreadyStarted }
            state.phase = .running
        }
        let listener: (fd: Int32, port: Int)
        let wake: (read: Int32, write: Int32)
        do {
            listener = try Socket.listenOnLoopback()
            do {
                wake = try Socket.makePipe()
            } catch {
                _ = close(listener.fd)
                throw error
            }
        } catch {
            withState { $0.phase = .stopped }
            throw error
        }
        withState { state in
            state.port = listener.port
            state.wakeWriteFD = wake.write
        }
        // A thread of its own, as each connection's delay and reads need: Dispatch's worker
        // threads are bounded, and a test run's many servers blocked all of them once.
        threads.enter()
        BlockingThread.start { [self] in
            acceptLoop(listenFD: listener.fd, wakeReadFD: wake.read)
            threads.leave()
        }
        // The literal is always valid, but URL(string:) is optional; fall back rather than crash.
        return URL(string: "http://127.0.0.1:\(listener.port)") ?? URL(fileURLWithPath: "/")
    }

    func stop() {
        condition.lock()
        if state.phase == .stopping {
            // Another thread is stopping the server: return once it has finished (bounded).
            let deadline = Date(timeIntervalSinceNow: Double(Self.receiveTimeoutSeconds + 4))
            while state.phase == .stopping, condition.wait(until: deadline) {}
            condition.unlock()
            return
        }
        guard state.phase == .running else {
            condition.unlock()
            return
        }
        state.phase = .stopping
        // shutdown (not close) wakes a thread blocked in recv/send without freeing the fd
        // number, which the owning connection thread closes itself.
        for fd in state.openConnections {
            _ = shutdown(fd, Int32(SHUT_RDWR))
        }
        condition.broadcast()  // wakes delayed responses
        let wakeFD = state.wakeWriteFD
        condition.unlock()

        var byte: UInt8 = 1
        _ = write(wakeFD, &byte, 1)
        // Bounded: every blocking point of a server thread is woken above or has a timeout.
        _ = threads.wait(timeout: .now() + .seconds(Self.receiveTimeoutSeconds + 2))
        _ = close(wakeFD)
        withState { state in
            state.wakeWriteFD = -1
            state.phase = .stopped
            condition.broadcast()
        }
    }

    // MARK: Accepting

    private func acceptLoop(listenFD: Int32, wakeReadFD: Int32) {
        // The accept thread owns the listening socket: closing it here, after the last accept,
        // releases the port without racing a concurrent accept on a reused fd number.
        defer {
            _ = close(listenFD)
            _ = close(wakeReadFD)
        }
        var fds = [
            pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeReadFD, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            fds[0].revents = 0
            fds[1].revents = 0
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            guard fds[0].revents != 0 else { continue }
            let clientFD = Socket.accept(listenFD)
            guard clientFD >= 0 else {
                // The client may have given up between poll and accept; keep serving.
                if errno == EINTR || errno == ECONNABORTED || errno == EAGAIN { continue }
                return
            }
            let admitted = withState { state -> Bool in
                guard state.phase == .running else { return false }
                state.openConnections.insert(clientFD)
                return true
            }
            guard admitted else {
                _ = close(clientFD)
                return
            }
            Socket.configureConnection(clientFD, receiveTimeoutSeconds: Self.receiveTimeoutSeconds)
            threads.enter()
            BlockingThread.start { [self] in
                serve(clientFD)
                threads.leave()
            }
        }
    }

    // MARK: Serving one connection

    private func serve(_ fd: Int32) {
        defer {
            withState { state in
                // Closed under the lock so that stop() never shuts down a reused fd number.
                state.openConnections.remove(fd)
                _ = close(fd)
            }
        }
        guard let request = readRequest(fd) else { return }
        let handler = withState { state in
            state.requests.append(request)
            return state.handler
        }
        let response = handler(request)
        guard response.behavior == .reply else { return }
        guard waitOut(response.delay) else { return }
        guard Socket.sendAll(fd, response.head()) else { return }
        _ = Socket.sendAll(fd, response.body)
        // Half-close so the client sees end-of-body before the socket goes away.
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Sleeps for `delay` unless the server stops first. Returns `false` when stopping.
    private func waitOut(_ delay: Duration) -> Bool {
        let (seconds, attoseconds) = delay.components
        let interval = Double(seconds) + Double(attoseconds) / 1e18
        let deadline = Date(timeIntervalSinceNow: max(0, interval))
        condition.lock()
        defer { condition.unlock() }
        while state.phase == .running {
            if !condition.wait(until: deadline) { break }
        }
        return state.phase == .running
    }

    /// Reads one request: the head up to the blank line, then `Content-Length` body bytes.
    private func readRequest(_ fd: Int32) -> HTTPRequest? {
        var buffer = Data()
        let separator = Data("\r\n\r\n".utf8)
        var headEnd: Range<Data.Index>?
        while headEnd == nil {
            guard buffer.count <= Self.maxHeaderBytes, Socket.receive(fd, into: &buffer) else { return nil }
            headEnd = buffer.firstRange(of: separator)
        }
        guard let headEnd else { return nil }
        // Byte for byte: a header may hold any byte, which a test may want to see exactly.
        let head = HeaderText.text(buffer[buffer.startIndex..<headEnd.lowerBound])

        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.first?.split(separator: " ", omittingEmptySubsequences: true) ?? []
        guard requestLine.count >= 2 else { return nil }
        let headers = lines.dropFirst().compactMap { line -> HTTPHeader? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = trimmingWhitespace(line[..<colon])
            let value = trimmingWhitespace(line[line.index(after: colon)...])
            return HTTPHeader(name, value)
        }
        let lengthText = headers.first { $0.name.lowercased() == "content-length" }?.value
        let bodyLength = lengthText.flatMap { Int($0) } ?? 0
        guard (0...Self.maxRequestBodyBytes).contains(bodyLength) else { return nil }

        var body = Data(buffer[headEnd.upperBound...])
        while body.count < bodyLength {
            guard Socket.receive(fd, into: &body) else { return nil }
        }
        return HTTPRequest(
            method: String(requestLine[0]),
            target: String(requestLine[1]),
            headers: headers,
            body: Data(body.prefix(bodyLength))  // a fresh Data, so indices start at 0
        )
    }

    /// A header's name or value without the spaces and tabs around it (HTTP's optional whitespace).
    private func trimmingWhitespace(_ text: Substring) -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(text.drop(while: isBlank).reversed().drop(while: isBlank).reversed())
    }
}

/// A socket bound to a free port on 127.0.0.1, for the package's tests: bound and never listening,
/// it holds an address that refuses every connection (the tests' dead remote).
package enum LoopbackSocket {
    /// A close-on-exec socket bound to a port the system picks on 127.0.0.1, and that port; the
    /// caller owns the descriptor.
    ///
    /// - Throws: ``LoopbackHTTPServerError/socket(operation:errno:)`` when a socket call fails.
    package static func bound() throws -> (fd: Int32, port: Int) { try Socket.bindOnLoopback() }
}

/// Thin wrappers over the BSD socket calls that differ between Glibc and Darwin.
private enum Socket {
    static func listenOnLoopback() throws -> (fd: Int32, port: Int) {
        let (fd, port) = try bindOnLoopback()
        guard listen(fd, 64) == 0 else { throw failure("listen", closing: fd) }
        return (fd, port)
    }

    /// Without SO_REUSEADDR or SO_REUSEPORT: either would let another socket that sets it bind
    /// the port too, and a dead port would then answer.
    static func bindOnLoopback() throws -> (fd: Int32, port: Int) {
        // Close-on-exec: child processes (the CLI tests spawn some) must not inherit the
        // socket, or the port would stay bound after stop().
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw LoopbackHTTPServerError.socket(operation: "socket", errno: errno) }
        #if !canImport(Glibc)
        setCloseOnExec(fd)
        #endif

        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0  // the system picks a free port
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)  // 127.0.0.1 only

        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw failure("bind", closing: fd) }

        var boundAddress = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &boundAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getsockname(fd, $0, &length)
            }
        }
        guard named == 0 else { throw failure("getsockname", closing: fd) }
        return (fd, Int(UInt16(bigEndian: boundAddress.sin_port)))
    }

    static func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        // pipe2/accept4 are not visible to Swift without _GNU_SOURCE, so close-on-exec is set
        // right after creation (a tiny window in which a concurrent fork could inherit the fd).
        guard pipe(&fds) == 0 else { throw LoopbackHTTPServerError.socket(operation: "pipe", errno: errno) }
        setCloseOnExec(fds[0])
        setCloseOnExec(fds[1])
        return (fds[0], fds[1])
    }

    static func accept(_ listenFD: Int32) -> Int32 {
        #if canImport(Darwin)
        let fd = Darwin.accept(listenFD, nil, nil)
        #elseif canImport(Glibc)
        let fd = Glibc.accept(listenFD, nil, nil)
        #else
        let fd = Musl.accept(listenFD, nil, nil)
        #endif
        setCloseOnExec(fd)
        return fd
    }

    static func configureConnection(_ fd: Int32, receiveTimeoutSeconds: Int) {
        var timeout = timeval()
        timeout.tv_sec = .init(receiveTimeoutSeconds)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        #if canImport(Darwin)
        // A client that hangs up mid-response must not kill the process with SIGPIPE.
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Appends what is available (blocking until something is). `false` on end of stream or error.
    static func receive(_ fd: Int32, into buffer: inout Data) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return true
            }
            if count < 0 && errno == EINTR { continue }
            return false
        }
    }

    /// Writes all of `data`. `false` when the peer went away.
    static func sendAll(_ fd: Int32, _ data: Data) -> Bool {
        #if canImport(Darwin)
        let flags: Int32 = 0
        #else
        // A client that hangs up mid-response must not kill the process with SIGPIPE.
        let flags = Int32(MSG_NOSIGNAL)
        #endif
        return data.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return true }
            var offset = 0
            while offset < raw.count {
                let sent = send(fd, base + offset, raw.count - offset, flags)
                if sent > 0 {
                    offset += sent
                } else if sent < 0 && errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
    }

    private static func failure(_ operation: String, closing fd: Int32) -> LoopbackHTTPServerError {
        let code = errno
        _ = close(fd)
        return .socket(operation: operation, errno: code)
    }

    private static func setCloseOnExec(_ fd: Int32) {
        if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    }
}
