import FeedCache
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CacheLog
import FeedCacheLog

/// How JSON's scalars are written, shared by the report page's data and the `cachelog` tool's
/// JSON (its encoder and replay's byte-level fast path), so that all write the same bytes for the
/// same value.
package enum JSONText {
    /// Appends `value` as a JSON string literal, escaping only what JSON requires: `"`, `\` and
    /// the control characters (`\n`, `\r`, `\t`, else `\u00XX`). Every escaped character is
    /// ASCII, so the UTF-8 is scanned byte by byte and copied in runs.
    package static func appendString(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                appendEscape(byte, to: &bytes)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(_ byte: UInt8, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\n"): bytes.append(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"): bytes.append(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"): bytes.append(UInt8(ascii: "t"))
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }

    package static func string(_ value: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count + 2)
        appendString(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A number as JSON: whole numbers without a fraction, and `null` for NaN and the infinities,
    /// which a stored record may hold but JSON cannot.
    package static func number(_ value: Double) -> String {
        value.isFinite ? TimestampText.number(value) : "null"
    }

    /// Appends `date(date)`'s UTF-8, without an intermediate String.
    package static func appendDate(_ date: Date, to bytes: inout [UInt8]) {
        guard date.timeIntervalSince1970.isFinite else {
            bytes.append(contentsOf: "null".utf8)
            return
        }
        bytes.append(UInt8(ascii: "\""))
        TimestampText.append(date, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A date as a JSON string (``DateText/string(_:)``), or `null` when it is not a finite number.
    package static func date(_ date: Date) -> String {
        var bytes: [UInt8] = []
        appendDate(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
