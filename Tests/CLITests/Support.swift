import Foundation
import LoopbackHTTP
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// What every CLI test stands on: the built `cachelog` binary run as a child process, exactly as a
// person types it, against a real HTTP server on 127.0.0.1 and a database in a directory of the
// test's own. Each test builds its own `Sandbox`, so tests run in parallel. Every wait is bounded:
// a child that outlives its time limit is killed and the test fails.

/// What one `cachelog` run did.
struct CLIResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    /// stdout's lines, blank ones included, without the empty string after the final newline.
    var stdoutLines: [String] {
        var lines = stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }
    var stderrLines: [String] { stderr.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }

    /// stdout parsed as one JSON object.
    func json() throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any], "stdout is not a JSON object: \(stdout)")
    }

    /// stdout parsed as one JSON array.
    func jsonArray() throws -> [[String: Any]] {
        try #require(JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [[String: Any]], "stdout is not a JSON array: \(stdout)")
    }

    /// stdout parsed as JSON lines, one object per line.
    func jsonLines() throws -> [[String: Any]] {
        try stdoutLines.map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
    }

    var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

/// Exit codes, as `cachelog --help` documents them.
enum ExitCode {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let noUsableData: Int32 = 3
    static let usage: Int32 = 64
}

/// One test's world: a server on loopback, a temporary directory with a database path in it,
/// and the runner for the built binary.
final class Sandbox: Sendable {
    let server: LoopbackHTTPServer
    let baseURL: URL
    let directory: URL
    let executable: URL

    /// Starts a server answering with `handler` (by default the sample feeds in `Feeds.routes`).
    init(serving handler: @escaping LoopbackHTTPServer.Handler = LoopbackHTTPServer.routes(Feeds.routes)) throws {
        executable = try builtProduct("cachelog")
        server = LoopbackHTTPServer(handler: handler)
        baseURL = try server.start()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cachelog-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The database directory the tests use (not created until a writing command runs).
    var db: String { path("db") }

    /// A path inside the test's directory.
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// The server's URL for `path`.
    func url(_ path: String) -> String { baseURL.absoluteString + path }

    /// The environment every child starts from: the test runner's, without anything that could
    /// change what the tool does (its own variables, NO_COLOR, proxies that would take loopback
    /// requests elsewhere, a no_proxy that would keep a test's own proxy from being used), and
    /// with a cache home inside the test's directory so that a run that forgets `--db` never
    /// touches the real `~/.cache`.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in ["CACHELOG_DB", "CACHELOG_NOW", "CACHELOG_LIBCURL", "NO_COLOR", "http_proxy", "HTTP_PROXY", "https_proxy",
                     "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
            environment.removeValue(forKey: name)
        }
        environment["XDG_CACHE_HOME"] = path("xdg-cache")
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// Runs `cachelog arguments` to the end (killing it after `timeout`) and returns what it printed.
    /// stdout and stderr go to files, so a child that prints a lot never blocks on a full pipe.
    /// The default timeout only catches a hang: on a loaded machine one run may take a minute.
    func run(_ arguments: [String], environment extra: [String: String] = [:],
             timeout: Duration = .seconds(300)) async throws -> CLIResult {
        let result = try await ChildProcess.run(executable, arguments, environment: environment(extra), timeout: timeout)
        #expect(!result.timedOut, "cachelog \(arguments.joined(separator: " ")) did not finish within \(timeout); killed")
        return CLIResult(status: result.status, stdout: result.stdoutText, stderr: result.stderrText)
    }

    /// `run` with `--db` pointing at the test's database.
    func cachelog(_ arguments: String..., environment: [String: String] = [:]) async throws -> CLIResult {
        try await run(["--db", db] + arguments, environment: environment)
    }

    /// Starts `cachelog arguments` with stdout on a pipe that the returned `Child` reads as it comes.
    func start(_ arguments: [String]) throws -> Child {
        try Child(executable: executable, arguments: arguments, environment: environment())
    }
}

/// A long-running `cachelog` (such as `replay --follow`) whose stdout is read as it comes.
final class Child: @unchecked Sendable {
    private let process: ChildProcess

    init(executable: URL, arguments: [String], environment: [String: String]) throws {
        process = try ChildProcess(executable, arguments, environment: environment)
    }

    deinit {
        if process.isRunning { process.send(SIGKILL) }
    }

    /// The complete lines printed so far.
    var lines: [String] {
        let text = String(decoding: (try? Data(contentsOf: process.stdoutFile)) ?? Data(), as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Waits (at most `timeout`) until at least `count` complete lines were printed.
    func waitForLines(_ count: Int, timeout: Duration = .seconds(15)) async -> [String] {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while lines.count < count && clock.now < deadline && process.isRunning {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return lines
    }

    var isRunning: Bool { process.isRunning }

    /// Terminates the child and waits (bounded) until it is gone.
    func stop() async {
        process.send(SIGTERM)
        _ = await process.finish(timeout: .seconds(5))
    }
}

/// The pseudo-terminal calls of the C library. Glibc's module does not export them (they sit
/// behind _XOPEN_SOURCE), so on Linux they are looked up at run time.
private enum PTY {
    #if canImport(Darwin)
    static func openPrimary() -> Int32 { posix_openpt(O_RDWR | O_NOCTTY) }
    static func unlock(_ fd: Int32) -> Bool { grantpt(fd) == 0 && unlockpt(fd) == 0 }
    static func name(_ fd: Int32) -> String? { ptsname(fd).map { String(cString: $0) } }
    #else
    private static func symbol<T>(_ name: String, as type: T.Type) -> T? {
        guard let address = dlsym(dlopen(nil, RTLD_NOW), name) else { return nil }
        return unsafeBitCast(address, to: type)
    }
    static func openPrimary() -> Int32 {
        symbol("posix_openpt", as: (@convention(c) (Int32) -> Int32).self)?(O_RDWR | O_NOCTTY) ?? -1
    }
    static func unlock(_ fd: Int32) -> Bool {
        guard let grant = symbol("grantpt", as: (@convention(c) (Int32) -> Int32).self),
              let unlock = symbol("unlockpt", as: (@convention(c) (Int32) -> Int32).self) else { return false }
        return grant(fd) == 0 && unlock(fd) == 0
    }
    static func name(_ fd: Int32) -> String? {
        guard let ptsname = symbol("ptsname", as: (@convention(c) (Int32) -> UnsafeMutablePointer<CChar>?).self) else { return nil }
        return ptsname(fd).map { String(cString: $0) }
    }
    #endif
}

/// Runs `cachelog arguments` with stdout (and with `stderrToo`, stderr) on a pseudo-terminal, the
/// way a person at a terminal sees it, and returns what it printed there (the terminal turns "\n"
/// into "\r\n"). Expects exit status `status`. Started with posix_spawn (``ChildProcess``), not
/// Foundation's `Process`, whose `run()` on Linux reads past a directory entry of /proc/self/fd
/// and, now and then, past the end of a page: a SIGSEGV of the whole test run
/// (swift-corelibs-foundation #5472).
func runOnTerminal(
    _ sandbox: Sandbox, _ arguments: [String], environment extra: [String: String] = [:], stderrToo: Bool = false,
    status expected: Int32 = 0
) async throws -> String {
    let master = PTY.openPrimary()
    try #require(master >= 0, "posix_openpt failed")
    defer { close(master) }
    try #require(PTY.unlock(master), "grantpt/unlockpt failed")
    let name = try #require(PTY.name(master), "ptsname failed")
    // Held open until the child has its own: a primary side with no replica open reads as ended.
    let replica = open(name, O_RDWR | O_NOCTTY)
    try #require(replica >= 0, "cannot open \(name)")
    let child = try ChildProcess(
        sandbox.executable, arguments, environment: sandbox.environment(extra), terminal: name, terminalGetsStderr: stderrToo)
    close(replica)

    // Read while the child runs (a terminal's buffer is small), then drain what is left.
    var output = Data()
    var buffer = [UInt8](repeating: 0, count: 4096)
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: .seconds(300))
    while clock.now < deadline {
        var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        if poll(&poller, 1, 20) > 0 {
            let count = read(master, &buffer, buffer.count)
            // EIO: the child closed its end and everything was read.
            if count <= 0 { break }
            output.append(contentsOf: buffer[0..<count])
        } else if !child.isRunning {
            break
        }
    }
    let ended = await child.finish(timeout: .seconds(5))
    #expect(ended.exited && ended.status == expected, "cachelog \(arguments.joined(separator: " ")) on a terminal: exit \(ended.status)")
    return String(decoding: output, as: UTF8.self)
}

/// A URL on 127.0.0.1 that refuses every connection for the whole test run (see ``DeadPort``).
func deadURL(path: String = "/films.json") throws -> String {
    try DeadPort.shared().baseURL.absoluteString + path
}

/// The escape character that starts every terminal colour code.
let escape = "\u{1B}"

/// A stack trace or a crash, which the tool must never print.
func looksLikeACrash(_ text: String) -> Bool {
    ["Fatal error", "Stack dump", "Current stack trace", "backtrace", "Segmentation fault", "Illegal instruction"]
        .contains { text.localizedCaseInsensitiveContains($0) }
}

/// Sample payloads, one per contract the tool knows.
enum Feeds {
    static let films = """
        [{"id":"2baf70d1-42bb-4437-b551-e5fed5a87abe","title":"Castle in the Sky","description":"Sheeta and Pazu","image":"https://example.com/laputa.jpg","url":"https://example.com/films/2baf70d1"},\
        {"id":"58611129-2dbc-4a81-a72f-77ddfc1b1b49","title":"My Neighbor Totoro","description":"Two sisters","image":"https://example.com/totoro.jpg","url":"https://example.com/films/58611129"}]
        """
    static let genres = #"{"genres":[{"id":1,"name":"Rock"},{"id":2,"name":"Jazz"},{"id":3,"name":"Folk"}]}"#
    static let images = """
        {"items":[{"id":"73A7F70C-75DA-4C2E-B5A3-EED40DC53AA6","description":"a lake","location":"Lakeside","image":"https://example.com/lake.jpg"}]}
        """
    static let verses = #"[{"scripture":"John 1:1","distance":0.12,"text":"In the beginning was the Word"}]"#
    static let people = #"{"count":2,"next":null,"previous":null,"results":[{"name":"Luke Skywalker"},{"name":"Leia Organa"}]}"#
    static let anyJSON = #"{"hello":"world","n":[1,2,3]}"#
    /// The film feed a day later: one more film.
    static let newerFilms = String(films.dropLast()) + #",{"id":"0440483e-ca0e-4120-8c50-4c8cd9b965d6","title":"Princess Mononoke","description":"Ashitaka","image":"https://example.com/mononoke.jpg","url":"https://example.com/films/0440483e"}]"#

    static let routes: [String: HTTPResponse] = [
        "/films.json": .json(films),
        "/genres.json": .json(genres),
        "/images.json": .json(images),
        "/verses.json": .json(verses),
        "/people.json": .json(people),
        "/any.json": .json(anyJSON),
        "/newer-films.json": .json(newerFilms),
    ]
}

/// The dates the stories run on.
enum Day {
    static let dec1 = "2026-12-01T10:00:00Z"
    static let dec2 = "2026-12-02T10:00:00Z"
    static let dec3 = "2026-12-03T10:00:00Z"
    static let dec4 = "2026-12-04T10:00:00Z"
    static let dec8 = "2026-12-08T10:00:00Z"
    static let dec9 = "2026-12-09T10:00:00Z"
    static let dec10 = "2026-12-10T10:00:00Z"
}

extension Sandbox {
    /// A log with a known history, built by real commands:
    ///
    ///     seq 1  delete films (replaced)   Dec 1     seq 5  delete films (replaced)   Dec 3
    ///     seq 2  put    films              Dec 1     seq 6  put    films              Dec 3
    ///     seq 3  delete genres (replaced)  Dec 2     seq 7  expire films (7d old)     Dec 10
    ///     seq 4  put    genres             Dec 2     seq 8  expire genres (8d old)    Dec 10
    func seedHistory() async throws {
        for (now, key, contract) in [(Day.dec1, "films", "films"), (Day.dec2, "genres", "genres"), (Day.dec3, "films", "films")] {
            let result = try await cachelog("--now", now, "load", url("/\(contract).json"), "--key", key, "--contract", contract)
            try #require(result.status == ExitCode.ok, "\(result)")
        }
        let validated = try await cachelog("--now", Day.dec10, "validate")
        try #require(validated.status == ExitCode.ok, "\(validated)")
    }
}

extension Dictionary where Key == String, Value == Any {
    func string(_ name: String) -> String? { self[name] as? String }
    func int(_ name: String) -> Int? { (self[name] as? NSNumber)?.intValue }
    func double(_ name: String) -> Double? { (self[name] as? NSNumber)?.doubleValue }
}

extension Sandbox {
    /// Runs `cachelog --db DB arguments` as a user whom file modes bind: root, whom none do, runs
    /// it without the capabilities that override them (util-linux's setpriv).
    func runAsReader(_ arguments: String...) async throws -> CLIResult {
        try await runAsReader(arguments)
    }

    /// Runs `cachelog --db DB arguments` as ``runAsReader(_:)-(String...)`` does.
    func runAsReader(_ arguments: [String]) async throws -> CLIResult {
        guard getuid() == 0 else { return try await run(["--db", db] + arguments) }
        let result = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            ["--bounding-set=-dac_override,-dac_read_search", executable.path, "--db", db] + arguments, environment: environment())
        return CLIResult(status: result.status, stdout: result.stdoutText, stderr: result.stderrText)
    }
}
