import CacheLogReports
import FeedCacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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

    /// 1; a test gives another, to read the bytes it writes.
    private let descriptor: Int32

    init(descriptor: Int32 = 1) {
        self.descriptor = descriptor
        buffer.reserveCapacity(limit)
    }
    deinit { flush() }

    /// Part of a line: written with the line's end (``line(_:)``, ``endLine()``), never before,
    /// so that a run that ends mid-line (killed, or stopped by a damaged database) leaves whole
    /// lines, and `--format jsonl` stays one JSON value per line.
    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
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

    /// A JSON string literal (``JSONText``).
    func appendJSONString(_ value: String) {
        JSONText.appendString(value, to: &buffer)
    }

    /// A date as JSON (``JSONText``).
    func appendJSONDate(_ date: Date) {
        JSONText.appendDate(date, to: &buffer)
    }

    /// A number as JSON (``JSONText``).
    func appendJSONNumber(_ value: Double) {
        buffer.append(contentsOf: JSONText.number(value).utf8)
    }

    /// `report` as one line of JSON for `--format json`; else what `text` writes.
    func show<Report: Encodable>(_ report: @autoclosure () throws -> Report, as format: TextOrJSON, text: () throws -> Void) throws {
        switch format {
        case .json: try json(report())
        case .text: try text()
        }
    }

    /// One report as one line of JSON (``JSONOutput``).
    func json<Report: Encodable>(_ report: Report, keyOrder: JSONOutput.KeyOrder = .encoded) throws {
        buffer.append(contentsOf: try JSONOutput(keyOrder: keyOrder).encode(report))
        endLine()
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
        let failure: Int32? = Self.wasClosed && descriptor == 1 ? EBADF : buffer.withUnsafeBytes { Self.writeAll($0, to: descriptor) }
        buffer.removeAll(keepingCapacity: true)
        guard let failure else { return }
        if failure != EPIPE { Terminal.message("cachelog: cannot write the output: \(String(cString: strerror(failure)))") }
        exit(Exit.failure)
    }

    /// Writes every byte of `bytes` to `descriptor`, again after a signal interrupted it.
    /// Returns nil when all were written, else the error (`EIO` for a write that wrote nothing).
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while offset < bytes.count {
            let written = systemWrite(descriptor, base + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return written < 0 ? errno : EIO }
            offset += written
        }
        return nil
    }
}
