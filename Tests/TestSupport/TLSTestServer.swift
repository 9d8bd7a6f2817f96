import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTPS server on 127.0.0.1, for the tests of TLS: Python's `http.server` and `ssl` in a child
/// process, with a certificate made for it by `openssl req -x509` (Debian's openssl; Tools/setup
/// installs it) for the name 127.0.0.1 only, trusted by nothing but ``certificateFile``.
///
/// The server binds its ports itself (port 0) and holds them for its whole life; it answers every
/// path with `body` (as JSON), except `/trickle`, which sends 100 000 bytes one every 10 ms and
/// prints `client closed` when the client hangs up before the end, and `/redirect?to=URL`, which
/// answers `302 Found` with `Location: URL` (``redirect(to:)``). It exits when ``stop()`` is
/// called or when the test process is gone.
public final class TLSTestServer: Sendable {
    /// The port it listens on.
    public let port: Int
    /// A second port, of plain HTTP, that answers `400 Bad Request` to whatever arrives first, as a
    /// web server does to a TLS client's hello.
    public let plainPort: Int
    /// The PEM certificate the server presents (self-signed: its own CA).
    public let certificateFile: String
    private let child: ChildProcess
    private let directory: TemporaryDirectory

    /// Makes a certificate and starts the server; returns once it listens.
    public init(body: String) async throws {
        directory = try TemporaryDirectory(prefix: "cachelog-tls")
        certificateFile = directory.path("cert.pem")
        let key = directory.path("key.pem")
        let openssl = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/openssl"), [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", key, "-out", certificateFile,
        ])
        guard openssl.exited, openssl.status == 0 else {
            throw TLSTestServerError("openssl req failed (is openssl installed? Tools/setup): \(openssl.stderrText)")
        }
        child = try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", Self.script, certificateFile, key, body, String(getpid())])
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(20)
        var ports: [Int] = []
        while ports.isEmpty, clock.now < deadline, child.isRunning {
            try await Task.sleep(for: .milliseconds(20))
            ports = Self.lines(of: child.stdoutFile).first.map { $0.split(separator: " ").compactMap { Int($0) } } ?? []
        }
        guard ports.count == 2 else {
            child.send(SIGKILL)
            let result = await child.finish(timeout: .seconds(5))
            throw TLSTestServerError("the TLS server did not start: \(result.stderrText)")
        }
        port = ports[0]
        plainPort = ports[1]
    }

    deinit { child.send(SIGKILL) }

    /// `https://127.0.0.1:PORT` (or another `host` that reaches 127.0.0.1) followed by `path`.
    public func url(_ path: String = "/feed", host: String = "127.0.0.1") -> URL {
        URL(string: "https://\(host):\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    /// Its URL that redirects (302) to `target`.
    public func redirect(to target: String) -> URL {
        var components = URLComponents()
        components.queryItems = [URLQueryItem(name: "to", value: target)]
        return url("/redirect?" + (components.percentEncodedQuery ?? ""))
    }

    /// What the server printed after its ports: `request PATH` per request, `sent 10 bytes` once
    /// a trickle has sent that many, `client closed`.
    public var events: [String] { Array(Self.lines(of: child.stdoutFile).dropFirst()) }

    /// Stops the server and waits for it to end.
    public func stop() async {
        child.send(SIGTERM)
        _ = await child.finish(timeout: .seconds(10))
    }

    private static func lines(of file: URL) -> [String] {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
        // Only whole lines: the last one may still be being written.
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    private static let script = #"""
    import http.server, os, socket, ssl, sys, threading, time, urllib.parse
    cert, key, body, parent = sys.argv[1], sys.argv[2], sys.argv[3].encode(), int(sys.argv[4])

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *args): pass
        def do_GET(self):
            print("request", self.path, flush=True)
            if self.path.startswith("/redirect?"):
                target = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)["to"][0]
                self.send_response(302)
                self.send_header("Location", target)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if self.path == "/trickle":
                self.send_response(200)
                self.send_header("Content-Length", "100000")
                self.end_headers()
                try:
                    for sent in range(1, 100001):
                        self.wfile.write(b"x")
                        self.wfile.flush()
                        if sent == 10:
                            print("sent 10 bytes", flush=True)
                        time.sleep(0.01)
                except OSError:
                    print("client closed", flush=True)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        # A client that refuses the certificate ends the handshake: not the server's failure.
        def handle_error(self, request, address): pass

    server = Server(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    # The handshake happens in each connection's thread, so a failed one never stops accept().
    server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)

    plain = socket.create_server(("127.0.0.1", 0))
    def answer_plainly():
        while True:
            connection, _ = plain.accept()
            connection.recv(4096)
            connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            connection.close()
    threading.Thread(target=answer_plainly, daemon=True).start()

    def watch_parent():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)
    threading.Thread(target=watch_parent, daemon=True).start()

    print(server.server_address[1], plain.getsockname()[1], flush=True)
    server.serve_forever()
    """#
}

/// The TLS test server could not start.
public struct TLSTestServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
