import Foundation
import TestSupport
import Testing

/// A remote that never finishes must not hang a script: `load --timeout` bounds the whole
/// transfer, and the cache serves as when offline.
@Suite("cachelog load against a remote that trickles", .hangGuard)
struct SlowRemoteTests {
    /// A server on 127.0.0.1 that promises 1000 bytes and sends one every 0.2 s, so the idle
    /// timeout between bytes never fires. It prints its port, then serves until `seconds` pass.
    static let trickleServer = """
        import socket, sys, threading, time
        deadline = time.time() + float(sys.argv[1])
        server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(8); server.settimeout(0.2)
        print(server.getsockname()[1], flush=True)
        def trickle(client):
            try:
                client.recv(65536)
                client.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: 1000\\r\\n\\r\\n")
                while time.time() < deadline:
                    client.sendall(b" "); time.sleep(0.2)
            except OSError: pass
            finally: client.close()
        while time.time() < deadline:
            try: client, _ = server.accept()
            except socket.timeout: continue
            threading.Thread(target=trickle, args=(client,), daemon=True).start()
        """

    @Test
    func load_fromARemoteThatTrickles_givesUpAtTheTimeout_andServesTheCache() async throws {
        let sandbox = try Sandbox()
        let saved = try await sandbox.cachelog("--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films")
        try #require(saved.status == ExitCode.ok, "\(saved)")

        let server = try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", Self.trickleServer, "40"])
        let portFile = server.stdoutFile
        var port: Int?
        for _ in 0..<500 where port == nil {
            port = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            try await Task.sleep(for: .milliseconds(10))
        }
        let listening = try #require(port, "the trickle server did not start")

        let clock = ContinuousClock()
        let started = clock.now
        let result = try await sandbox.cachelog(
            "--now", Day.dec2, "load", "http://127.0.0.1:\(listening)/films.json", "--key", "films", "--contract", "films",
            "--timeout", "2", "--format", "json")
        let elapsed = clock.now - started
        _ = await server.finish(timeout: .milliseconds(1))

        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(try result.json().string("source") == "cache")
        #expect(elapsed < .seconds(15), "load took \(elapsed) against a 2 s timeout")
    }

    @Test(arguments: ["0", "3601", "-1", "ten"])
    func load_timeoutOutOfRange_isAUsageError(_ value: String) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.cachelog("load", sandbox.url("/films.json"), "--key", "films", "--timeout", value)
        #expect(result.status == ExitCode.usage, "\(result)")
    }
}
