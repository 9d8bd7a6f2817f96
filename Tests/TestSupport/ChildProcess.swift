import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process the tests run: its output goes to files, so a chatty child never blocks on a
/// full pipe, and waiting polls with `Task.sleep`, so a test never holds one of the few threads
/// of Swift's cooperative pool while a child runs (blocking them starves every other test,
/// the loopback servers' included).
///
/// Started with `posix_spawn`, not Foundation's `Process`: on Linux, `Process.run()` reads
/// `/proc/self/fd` past the end of a directory entry (swift-corelibs-foundation #5472) and now
/// and then crashes the whole test run with SIGSEGV, more often the more children a run starts.
public final class ChildProcess: @unchecked Sendable {
    /// How a child ended.
    public struct Result: Sendable {
        public var status: Int32
        /// False when a signal ended it (then `status` is the signal number) or it was killed on timeout.
        public var exited: Bool
        /// True when it outlived its time limit and was killed.
        public var timedOut: Bool
        public var stdout: Data
        public var stderr: Data
        public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    }

    private let pid: pid_t
    private let output: URL
    private let errors: URL
    // The wait status once the child was reaped; under `lock`, as any task may ask.
    private let lock = NSLock()
    private var reaped: Int32?

    /// The file the child's stdout goes to, to read while it runs.
    public var stdoutFile: URL { output }

    /// Starts `executable` with `arguments`; stdin is empty. `environment` defaults to this
    /// process's. The child starts with every signal at its default action and unblocked, and
    /// with no descriptor of ours but its stdin, stdout and stderr. `terminal`: the path of a
    /// pseudo-terminal's replica for its stdout (and, with `terminalGetsStderr`, its stderr),
    /// which the caller reads from the primary side.
    public init(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, terminal: String? = nil,
        terminalGetsStderr: Bool = false
    ) throws {
        let id = UUID().uuidString
        output = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(id).out")
        errors = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(id).err")
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(id).in")
        try Data().write(to: output)
        try Data().write(to: errors)
        try Data().write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // An empty file of the run's own, not /dev/null: no test hands a child a system node
        // (Tests/README.md).
        posix_spawn_file_actions_addopen(&actions, 0, input.path, O_RDONLY, 0)
        if let terminal {
            posix_spawn_file_actions_addopen(&actions, 1, terminal, O_RDWR | O_NOCTTY, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_TRUNC, 0)
        }
        if let terminal, terminalGetsStderr {
            posix_spawn_file_actions_addopen(&actions, 2, terminal, O_RDWR | O_NOCTTY, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, errors.path, O_WRONLY | O_TRUNC, 0)
        }
        _ = Self.closeFrom?(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let environment = environment ?? ProcessInfo.processInfo.environment
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let failure = posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
        guard failure == 0 else {
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(failure), userInfo: [
                NSLocalizedDescriptionKey: "posix_spawn \(executable.path): \(String(cString: strerror(failure)))",
            ])
        }
        self.pid = pid
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34 and later), looked up at run time:
    /// the module map does not export it.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// The process id, for tests that signal it themselves.
    public var processIdentifier: pid_t { pid }

    /// Sends `signal` (SIGINT, SIGTERM) to the child.
    public func send(_ signal: Int32) {
        kill(pid, signal)
    }

    /// The child's wait status, once it has ended (it is then reaped, once); `nil` while it runs.
    private func reap() -> Int32? {
        lock.withLock {
            if let reaped { return reaped }
            var status: Int32 = 0
            while true {
                let result = waitpid(pid, &status, WNOHANG)
                if result == pid {
                    reaped = status
                    return status
                }
                if result == -1 && errno == EINTR { continue }
                return nil
            }
        }
    }

    /// Whether the child still runs.
    public var isRunning: Bool { reap() == nil }

    /// Kills the child if it still runs (SIGKILL, then reaps it): a test stops what it started
    /// (a racer, a server) whatever its outcome, so that nothing of it outlives the run.
    public func stop() {
        guard reap() == nil else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        lock.withLock { reaped = status }
    }

    /// A child no one waited for (a test that threw before it did) is stopped with it.
    deinit {
        stop()
        try? FileManager.default.removeItem(at: output)
        try? FileManager.default.removeItem(at: errors)
    }

    /// Waits for the child to end, at most `timeout` (then kills it), and returns what it printed.
    /// The default only catches a child that hangs: a loaded machine may run one for minutes.
    public func finish(timeout: Duration = .seconds(300)) async -> Result {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var status = reap()
        while status == nil && clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
            status = reap()
        }
        var timedOut = false
        if status == nil {
            timedOut = true
            kill(pid, SIGKILL)
            while status == nil {
                try? await Task.sleep(for: .milliseconds(10))
                status = reap()
            }
        }
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: errors)
        }
        // The wait status: the signal in the low 7 bits, or 0 there and the exit code above them.
        let raw = status ?? 0
        let signal = raw & 0x7F
        return Result(
            status: signal == 0 ? (raw >> 8) & 0xFF : signal, exited: !timedOut && signal == 0, timedOut: timedOut,
            stdout: (try? Data(contentsOf: output)) ?? Data(), stderr: (try? Data(contentsOf: errors)) ?? Data())
    }

    /// Runs `executable` to the end.
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                           timeout: Duration = .seconds(300)) async throws -> Result {
        try await ChildProcess(executable, arguments, environment: environment).finish(timeout: timeout)
    }
}
