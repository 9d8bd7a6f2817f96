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

/// Messages for people go to stderr; colour and progress lines only on a terminal, and never
/// with NO_COLOR or TERM=dumb (a terminal that cannot move the cursor or clear a line).
enum Terminal {
    static let stderrIsTerminal = isatty(2) == 1
    static let stdoutIsTerminal = isatty(1) == 1
    static let colorAllowed = (Environment.value("NO_COLOR").map(\.isEmpty) ?? true) && Environment.value("TERM") != "dumb"
    /// `\r\e[2K` rewrites a progress line in place: escape sequences like colour.
    static let progressAllowed = stderrIsTerminal && colorAllowed

    static func message(_ text: String) {
        writeStderr(text + "\n")
    }

    /// Writes to stderr and lets a failure pass. FileHandle's `write` traps on an error, so a
    /// closed pipe on stderr (`2>&1 | head -c 10`) killed the tool with SIGILL; a message nobody
    /// can read must not change what the run does or its exit code.
    static func writeStderr(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { StandardOutput.writeAll($0, to: 2) }
    }

    /// Colours `text` for stdout when stdout is a terminal that accepts colour.
    static func color(_ text: String, _ code: String) -> String {
        guard stdoutIsTerminal && colorAllowed else { return text }
        return "\u{1B}[\(code)m\(text)\u{1B}[0m"
    }

    /// A progress line on stderr, rewritten in place; only when stderr is a terminal.
    static func progress(_ text: String) {
        guard progressAllowed else { return }
        writeStderr("\r\u{1B}[2K\(text)")
    }

    /// `text` as progress while `work` runs.
    static func showingProgress<Result>(_ text: String, _ work: () async throws -> Result) async rethrows -> Result {
        progress(text)
        defer { endProgress() }
        return try await work()
    }

    static func endProgress() {
        guard progressAllowed else { return }
        writeStderr("\r\u{1B}[2K")
    }
}
