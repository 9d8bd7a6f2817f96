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
    static let colorAllowed = (EnvironmentVariables.value("NO_COLOR").map(\.isEmpty) ?? true) && EnvironmentVariables.value("TERM") != "dumb"
    /// `\r\e[2K` rewrites a progress line in place: escape sequences like colour.
    static let progressAllowed = stderrIsTerminal && colorAllowed

    /// One line: a message quotes keys, queries and servers' words, whose control characters
    /// (a newline, an escape sequence) are written as escapes (`\n`, `\u{1b}`), so that one
    /// failure stays one line and cannot move the terminal's cursor.
    static func message(_ text: String) {
        var line = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            case _ where scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value):
                line += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: line.unicodeScalars.append(scalar)
            }
        }
        writeStderr(line + "\n")
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
