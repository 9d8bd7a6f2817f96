import FeedCache
import ArgumentParser
import CacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A `--from`, `--to`, `--as-of` or `--before` value: a sequence number, a date, or a duration
/// before `--now` (`7d` and `-7d` alike: seven days ago). A relative value is resolved against
/// the run's clock by ``position(now:inclusiveDay:)`` in `run()`, never while parsing.
struct PositionArgument: ExpressibleByArgument, Sendable {
    enum Value: Sendable {
        case seq(UInt64)
        case date(Date)
        /// A bare day (`2026-12-08`): its first instant.
        case day(Date)
        /// This long before the clock.
        case ago(TimeInterval)
    }

    let value: Value

    /// The forms, as the help shows them.
    static let forms = "a seq (12), a date (2026-12-01T10:00:00Z, 2026-12-01T11:00:00+01:00, 2026-12-01), or a duration before --now (7d or -7d, 24h, 1w; units s m h d w)"

    static func parse(_ argument: String) throws -> PositionArgument {
        if let seq = UInt64(argument) { return PositionArgument(value: .seq(seq)) }
        if let date = DateParsing.date(argument) {
            // A bare day is exactly `yyyy-mm-dd`.
            return PositionArgument(value: argument.utf8.count == 10 ? .day(date) : .date(date))
        }
        let unsigned = argument.hasPrefix("-") ? String(argument.dropFirst()) : argument
        if unsigned.contains("-") || unsigned.contains(":") {
            throw ValidationError("'\(argument)' is not a date; use \(DateParsing.forms)")
        }
        if let first = unsigned.first, first.isASCII, first.isNumber, !unsigned.allSatisfy(\.isNumber) {
            // Looks like a duration: say what is wrong with it in the duration's own words.
            return PositionArgument(value: .ago(try MaxAge.duration(unsigned).timeInterval))
        }
        throw ValidationError("'\(argument)' is not a position: give \(forms)")
    }

    init(value: Value) { self.value = value }

    init?(argument: String) {
        guard let parsed = try? Self.parse(argument) else { return nil }
        self = parsed
    }

    /// The log position at `now`. With `inclusiveDay` (an upper bound such as `--to`), a bare
    /// day means its whole day: the last instant before the next day's 00:00 UTC.
    func position(now: Date, inclusiveDay: Bool = false) -> LogPosition {
        switch value {
        case .seq(let seq): .seq(seq)
        case .date(let date): .date(date)
        case .day(let start):
            inclusiveDay ? .date(Date(timeIntervalSince1970: (start.timeIntervalSince1970 + 86_400).nextDown)) : .date(start)
        case .ago(let interval): .date(now.addingTimeInterval(-interval))
        }
    }
}
