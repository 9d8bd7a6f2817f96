import Foundation
#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif

/// Standard output with a buffer: results go to stdout (and only results), in large writes, so
/// that a million-line replay is not a million system calls. `flush()` after each line when
/// following, so a pipe sees events as they happen.
final class StandardOutput {
    /// Set once, at start and before any task runs, when the tool was started with stdout closed
    /// (`>&-`): descriptor 1 then holds /dev/null (see `CacheLogCommand.main`), and output fails.
    nonisolated(unsafe) static var wasClosed = false

    private(set) var buffer: [UInt8] = []
    private let limit = 1 << 16

    init() { buffer.reserveCapacity(limit) }
    deinit { flush() }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= limit { flush() }
    }

    func line(_ text: String = "") {
        write(text)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= limit { flush() }
    }

    // MARK: bytes, for the per-event hot path (no intermediate Strings)

    func append(_ text: StaticString) {
        buffer.append(contentsOf: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    func append(_ value: UInt64) {
        if value < 10 { buffer.append(UInt8(ascii: "0") + UInt8(value)); return }
        var digits: (UInt64, Int) = (value, 0)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { scratch in
            while digits.0 > 0 {
                scratch[19 - digits.1] = UInt8(ascii: "0") + UInt8(digits.0 % 10)
                digits.0 /= 10
                digits.1 += 1
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[(20 - digits.1)...]))
        }
    }

    /// Bytes as they are (image data).
    func append(_ data: Data) {
        buffer.append(contentsOf: data)
        if buffer.count >= limit { flush() }
    }

    func append(_ value: Int) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        append(UInt64(value.magnitude))
    }

    /// A JSON string literal, escaping only what JSON requires.
    func appendJSONString(_ value: String) {
        var utf8 = value
        let plain = utf8.withUTF8 { bytes -> Bool in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            buffer.append(UInt8(ascii: "\""))
            buffer.append(contentsOf: bytes)
            buffer.append(UInt8(ascii: "\""))
            return true
        }
        if !plain { buffer.append(contentsOf: JSONText.string(value).utf8) }
    }

    /// A date as a JSON string, formatted as `DateParsing.string` does; `null` when it is not a
    /// finite number (see `JSONText.date`).
    func appendJSONDate(_ date: Date) {
        guard date.timeIntervalSince1970.isFinite else {
            append("null")
            return
        }
        buffer.append(UInt8(ascii: "\""))
        DateParsing.append(date, to: &buffer)
        buffer.append(UInt8(ascii: "\""))
    }

    /// Ends a line built with the `append` methods.
    func endLine() {
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= limit { flush() }
    }

    /// Writes the buffer to stdout. Output that cannot be written ends the run with exit 1:
    /// silently when the reader has gone (EPIPE: `| head`; SIGPIPE is ignored, so this is how it
    /// arrives), with one line on stderr otherwise (a full disk, a closed stdout): never a
    /// result lost while the exit status says all went well.
    func flush() {
        guard !buffer.isEmpty else { return }
        let failure: Int32? = Self.wasClosed ? EBADF : buffer.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return nil }
            var offset = 0
            while offset < raw.count {
                let written = systemWrite(1, base + offset, raw.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return written < 0 ? errno : EIO }
                offset += written
            }
            return nil
        }
        buffer.removeAll(keepingCapacity: true)
        guard let failure else { return }
        if failure != EPIPE { Terminal.message("cachelog: cannot write the output: \(String(cString: strerror(failure)))") }
        exit(Exit.failure)
    }
}

/// Messages for people go to stderr; colour only on a terminal and never with NO_COLOR.
enum Terminal {
    static let stderrIsTerminal = isatty(2) == 1
    static let stdoutIsTerminal = isatty(1) == 1
    static let colorAllowed = ProcessInfo.processInfo.environment["NO_COLOR"].map(\.isEmpty) ?? true

    static func message(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Colours `text` for stdout when stdout is a terminal that accepts colour.
    static func color(_ text: String, _ code: String) -> String {
        guard stdoutIsTerminal && colorAllowed else { return text }
        return "\u{1B}[\(code)m\(text)\u{1B}[0m"
    }

    /// A progress line on stderr, rewritten in place; only when stderr is a terminal.
    static func progress(_ text: String) {
        guard stderrIsTerminal else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K\(text)".utf8))
    }

    static func endProgress() {
        guard stderrIsTerminal else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }
}

/// Hand-written JSON for the hot paths (replay writes a line per event); `JSONEncoder` elsewhere.
enum JSONText {
    static func string(_ value: String) -> String {
        // Most keys need no escaping: check the bytes once and copy the string whole.
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            return "\"" + value + "\""
        }
        var out = "\""
        out.reserveCapacity(value.utf8.count + 2)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let s where s.value < 0x20:
                out += String(format: "\\u%04x", s.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A number as JSON: whole numbers without a fraction, and `null` for NaN and the infinities,
    /// which a stored record may hold but JSON cannot.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        return value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// A date as a JSON string (`DateParsing.string`), or `null` when it is not a finite number.
    static func date(_ date: Date) -> String {
        date.timeIntervalSince1970.isFinite ? "\"" + DateParsing.string(date) + "\"" : "null"
    }

    /// A payload as JSON: when it is JSON, its own bytes without the whitespace between tokens
    /// (numbers and escapes exactly as stored, and always one line); else a base64 string.
    static func payload(_ data: Data) -> String {
        if let scanned = JSONScanner.scan(Array(data)) {
            return String(decoding: scanned.compact, as: UTF8.self)
        }
        return string(data.base64EncodedString())
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(DateParsing.string(date))
        }
        return encoder
    }
}
