import Foundation

/// A child process the tests run: its output goes to files, so a chatty child never blocks on a
/// full pipe, and waiting polls with `Task.sleep`, so a test never holds one of the few threads
/// of Swift's cooperative pool while a child runs (blocking them starves every other test,
/// the loopback servers' included).
public struct ChildProcess {
    /// How a child ended.
    public struct Result: Sendable {
        public var status: Int32
        /// False when a signal ended it (then `status` is the signal number) or it was killed on timeout.
        public var exited: Bool
        public var stdout: Data
        public var stderr: Data
        public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    }

    private let process = Process()
    private let output: URL
    private let errors: URL

    /// The file the child's stdout goes to, to read while it runs.
    public var stdoutFile: URL { output }

    /// Starts `executable` with `arguments`; stdin is empty.
    public init(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws {
        let id = UUID().uuidString
        output = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(id).out")
        errors = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(id).err")
        try Data().write(to: output)
        try Data().write(to: errors)
        let out = try FileHandle(forWritingTo: output)
        let err = try FileHandle(forWritingTo: errors)
        defer {
            try? out.close()
            try? err.close()
        }
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
    }

    /// Sends `signal` (SIGINT, SIGTERM) to the child.
    public func send(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits for the child to end, at most `timeout` (then kills it), and returns what it printed.
    public func finish(timeout: Duration = .seconds(60)) async -> Result {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while process.isRunning && clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        var timedOut = false
        if process.isRunning {
            timedOut = true
            kill(process.processIdentifier, SIGKILL)
            while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
        }
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: errors)
        }
        return Result(
            status: process.terminationStatus, exited: !timedOut && process.terminationReason == .exit,
            stdout: (try? Data(contentsOf: output)) ?? Data(), stderr: (try? Data(contentsOf: errors)) ?? Data())
    }

    /// Runs `executable` to the end.
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                           timeout: Duration = .seconds(60)) async throws -> Result {
        try await ChildProcess(executable, arguments, environment: environment).finish(timeout: timeout)
    }
}
