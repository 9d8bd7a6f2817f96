import ArgumentParser
import CacheLog
import FeedCache
import Foundation

/// ISO 8601 dates as people type them: with or without fractional seconds, or a bare day (UTC).
enum DateParsing {
    static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle().year().month().day()) { return date }
        return nil
    }

    /// `2026-12-01T10:00:00Z`, with milliseconds only when the date has them.
    static func string(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `string(date)`'s UTF-8 to `bytes`.
    ///
    /// Written by hand (days-to-civil, proleptic Gregorian, UTC) and straight into bytes: a replay
    /// prints two dates per line, and formatting them was most of the time of a long replay.
    static func append(_ date: Date, to bytes: inout [UInt8]) {
        let seconds = date.timeIntervalSince1970
        let whole = seconds.rounded(.down)
        guard whole.isFinite, abs(whole) < 1e13 else {
            bytes.append(contentsOf: date.formatted(.iso8601).utf8)
            return
        }
        // Truncated, as Foundation's formatter does.
        let milliseconds = Int((seconds - whole) * 1000)
        let total = Int(whole)
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secondOfDay = total - days * 86_400
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)

        if year < 0 || year > 9999 {
            bytes.append(contentsOf: date.formatted(.iso8601).utf8)
            return
        }
        digits(year, 4, &bytes)
        bytes.append(UInt8(ascii: "-"))
        digits(month, 2, &bytes)
        bytes.append(UInt8(ascii: "-"))
        digits(day, 2, &bytes)
        bytes.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3600, 2, &bytes)
        bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2, &bytes)
        bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2, &bytes)
        if milliseconds != 0 {
            bytes.append(UInt8(ascii: "."))
            digits(milliseconds, 3, &bytes)
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    /// `value` (0 ≤ value < 10^width) in exactly `width` decimal digits.
    private static func digits(_ value: Int, _ width: Int, _ bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}

/// A `--max-age` value: `90s`, `15m`, `12h` or `7d`.
struct MaxAgeArgument: ExpressibleByArgument, Sendable {
    let value: MaxAge

    init?(argument: String) {
        guard let value = MaxAge(argument), value.timeInterval > 0 else { return nil }
        self.value = value
    }

    init(_ value: MaxAge) { self.value = value }

    var defaultValueDescription: String { value.description }
}

/// A `--from`, `--to`, `--as-of` or `--before` value: a sequence number or an ISO 8601 date.
struct PositionArgument: ExpressibleByArgument, Sendable {
    let position: LogPosition

    init?(argument: String) {
        if let seq = UInt64(argument) {
            position = .seq(seq)
        } else if let date = DateParsing.date(argument) {
            position = .date(date)
        } else {
            return nil
        }
    }
}

/// Renders a duration in seconds the way the options take it back: `8d`, `12h`, `15m`, `90s`,
/// or a combination such as `7d 2h`.
enum DurationText {
    static func string(_ seconds: TimeInterval) -> String {
        var rest = Int(seconds.rounded(.towardZero))
        if rest == 0 { return "0s" }
        let sign = rest < 0 ? "-" : ""
        rest = abs(rest)
        var parts: [String] = []
        for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)] where rest >= size {
            parts.append("\(rest / size)\(unit)")
            rest %= size
            if parts.count == 2 { break }
        }
        return sign + parts.joined(separator: " ")
    }
}

/// `--format` values.
enum TextOrJSON: String, ExpressibleByArgument, CaseIterable, Sendable {
    case text, json
}

enum TextOrJSONLines: String, ExpressibleByArgument, CaseIterable, Sendable {
    case text, jsonl
}
