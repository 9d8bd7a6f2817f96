#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs this same executable as a child process, as a person would type the command, and shows
/// the command line first. The children share stdout and stderr with the demo.
///
/// Started with `posix_spawn`: Foundation's `Process` is not in `FoundationEssentials`.
struct DemoRunner {
    let executable: String
    let db: String

    init(db: String) throws {
        #if canImport(FoundationEssentials)
        // Linux: the kernel names the running executable.
        let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        #else
        let path = Bundle.main.executablePath
        #endif
        guard let path else { throw CLIFailure("cannot find the cachelog executable") }
        executable = path
        self.db = db
    }

    /// Unbuffered, so the demo's lines and its children's output arrive in order.
    func say(_ text: String) {
        let out = StandardOutput()
        out.line(text)
        out.flush()
    }

    func step(_ number: Int, _ text: String) {
        say("\n\(Terminal.color("\(number). \(text)", "1"))")
    }

    func run(_ arguments: [String], expecting expected: Int32 = 0) throws {
        let shown = arguments.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
        say("$ cachelog \(shown)")
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "CACHELOG_NOW")
        let status = try spawnAndWait(["--db", db] + arguments, environment: environment)
        if status != 0 { say("(exit \(status))") }
        guard status == expected else {
            throw CLIFailure("demo step 'cachelog \(shown)' exited \(status), expected \(expected)")
        }
    }

    /// Runs the executable with `arguments` and waits for it: its exit status, or the number of
    /// the signal that ended it (as `Process.terminationStatus` gives it).
    private func spawnAndWait(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid = pid_t()
        let failure = posix_spawn(&pid, executable, nil, nil, argv, envp)
        guard failure == 0 else {
            throw CLIFailure("cannot run \(executable): \(String(cString: strerror(failure)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw CLIFailure("cannot wait for \(executable): \(String(cString: strerror(errno)))") }
        }
        // WIFEXITED and WEXITSTATUS are macros Swift does not import: the low 7 bits are the
        // signal that ended the child (0 when it exited), the next 8 its exit status.
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : signal
    }
}
