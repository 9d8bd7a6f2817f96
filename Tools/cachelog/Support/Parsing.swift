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
        let whole = date.timeIntervalSince1970.rounded(.down) == date.timeIntervalSince1970
        return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: !whole))
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
