#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How old a cache may get before it expires, as a calendar amount.
///
/// Written on the command line as a number and a unit: `90s`, `15m`, `12h`, `7d`
/// (see ``init(_:)`` and ``description``).
public enum MaxAge: Sendable, Hashable {
    /// A number of seconds.
    case seconds(Int)
    /// A number of minutes.
    case minutes(Int)
    /// A number of hours.
    case hours(Int)
    /// A number of calendar days.
    case days(Int)

    /// The amount as calendar components, for date arithmetic.
    ///
    /// `Calendar` does not fail on an amount past its range (`.seconds(.max)`): it answers a
    /// wrong date, possibly in the past. ``CachePolicy`` counts in ``timeInterval`` instead.
    public var dateComponents: DateComponents {
        switch self {
        case .seconds(let value): DateComponents(second: value)
        case .minutes(let value): DateComponents(minute: value)
        case .hours(let value): DateComponents(hour: value)
        case .days(let value): DateComponents(day: value)
        }
    }

    /// The amount in seconds, for recording (for example in an `expire` event).
    ///
    /// Exact for the UTC Gregorian calendar ``CachePolicy`` uses: a UTC day is 86,400 seconds.
    public var timeInterval: TimeInterval {
        switch self {
        case .seconds(let value): TimeInterval(value)
        case .minutes(let value): TimeInterval(value) * 60
        case .hours(let value): TimeInterval(value) * 3_600
        case .days(let value): TimeInterval(value) * 86_400
        }
    }
}

extension MaxAge {
    /// The amount `seconds` in the largest unit that holds it exactly (`604800` is `7d`), or
    /// `nil` when it is negative, not finite, or not a whole number. An amount past `Int`
    /// seconds is `Int.max` seconds: both lie far beyond any date.
    public init?(seconds: TimeInterval) {
        guard seconds.isFinite, seconds >= 0, seconds.rounded(.towardZero) == seconds else { return nil }
        guard let whole = Int(exactly: seconds) else {
            self = .seconds(.max)
            return
        }
        if whole % 86_400 == 0 { self = .days(whole / 86_400) }
        else if whole % 3_600 == 0 { self = .hours(whole / 3_600) }
        else if whole % 60 == 0 { self = .minutes(whole / 60) }
        else { self = .seconds(whole) }
    }
}

extension MaxAge: LosslessStringConvertible {
    /// Parses a non-negative whole number followed by one unit letter: `s`, `m`, `h`, `d` or `w`
    /// (a week: 7 days, held and printed as days).
    ///
    /// `"90s"`, `"15m"`, `"12h"`, `"7d"` and `"1w"` parse; `"7"`, `"-1d"`, `"1.5h"`, `"7 days"` do not.
    public init?(_ description: String) {
        guard let unit = description.last,
              let value = Int(description.dropLast()),
              value >= 0,
              description.first?.isNumber == true
        else { return nil }
        switch unit {
        case "s": self = .seconds(value)
        case "m": self = .minutes(value)
        case "h": self = .hours(value)
        case "d": self = .days(value)
        case "w":
            let (days, overflow) = value.multipliedReportingOverflow(by: 7)
            guard !overflow else { return nil }
            self = .days(days)
        default: return nil
        }
    }

    /// The command-line spelling: `90s`, `15m`, `12h`, `7d`.
    public var description: String {
        switch self {
        case .seconds(let value): "\(value)s"
        case .minutes(let value): "\(value)m"
        case .hours(let value): "\(value)h"
        case .days(let value): "\(value)d"
        }
    }
}
