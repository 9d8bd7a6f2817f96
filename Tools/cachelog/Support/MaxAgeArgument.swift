import ArgumentParser
import Foundation
import FeedCache

/// A duration option's value (`--max-age`, `--keep`): `90s`, `15m`, `12h`, `7d` or `1w`, more
/// than zero and at most ``maximum``. One grammar for every duration the tool takes; relative
/// times (`--as-of 7d`) use it too, through ``PositionArgument``.
struct MaxAgeArgument: ExpressibleByArgument, CustomStringConvertible, Sendable {
    let value: MaxAge

    /// 100 years. Nothing is cached that long, and a bound keeps every date computed from a max
    /// age (the moment a cache goes stale) a date a calendar can show.
    static let maximum = MaxAge.days(36_500)

    /// `--max-age` of the commands that judge staleness after the fact (`audit`, `report`).
    static let judgingHelp = ArgumentHelp("One max age that judges staleness for every version: 90s, 15m, 12h, 7d or 1w (units s m h d w); at most 36500d. (default: each version's recorded policy)", valueName: "duration")

    /// The grammar, as the help and the error messages show it.
    static let forms = "a whole number and a unit: s, m, h, d or w (90s, 15m, 12h, 7d, 1w = 7d)"

    /// What a command line gets wrong about a duration, in the words the error message uses.
    enum Problem: Error, Equatable, CustomStringConvertible {
        case notADuration
        case notWhole(suggestion: String?)
        case spelledOut(suggestion: String)
        case notPositive
        case negative
        case tooLong

        var description: String {
            switch self {
            case .notADuration: "write \(MaxAgeArgument.forms)"
            case .notWhole(let suggestion?): "the number must be whole: write \(suggestion); units are s, m, h, d and w"
            case .notWhole(nil): "the number must be whole; use a smaller unit (s, m, h, d or w), e.g. 36h for 1.5d"
            case .spelledOut(let suggestion): "write the unit as one letter, with no space: \(suggestion) (units: s, m, h, d, w)"
            case .notPositive: "the duration must be more than 0 (e.g. 90s, 15m, 12h, 7d, 1w)"
            case .negative: "a negative duration is not allowed here; write \(MaxAgeArgument.forms)"
            case .tooLong: "the duration must be at most \(MaxAgeArgument.maximum) (100 years)"
            }
        }
    }

    /// Parses `argument`, saying what is wrong with it when it is not a usable max age. Give it to
    /// `@Option(transform:)` so that the usage error names the bound.
    static func parse(_ argument: String) throws -> MaxAgeArgument {
        if argument.hasPrefix("-") { throw Problem.negative }
        let value = try duration(argument)
        guard value.timeInterval > 0 else { throw Problem.notPositive }
        return MaxAgeArgument(value)
    }

    /// Parses an unsigned duration (zero allowed), at most ``maximum``, explaining the usual
    /// mistakes: `1.5d`, `7days`, `7 days`.
    static func duration(_ argument: String) throws -> MaxAge {
        if let value = MaxAge(argument) {
            guard value.timeInterval <= maximum.timeInterval else { throw Problem.tooLong }
            return value
        }
        let text = argument.trimmingCharacters(in: .whitespaces)
        let number = String(text.prefix { $0.isASCII && ($0.isNumber || $0 == ".") })
        let rest = text.dropFirst(number.count).trimmingCharacters(in: .whitespaces).lowercased()
        guard !number.isEmpty, let amount = Double(number), amount.isFinite else { throw Problem.notADuration }
        let units: [(names: [String], letter: String, seconds: Double)] = [
            (["s", "sec", "secs", "second", "seconds"], "s", 1),
            (["m", "min", "mins", "minute", "minutes"], "m", 60),
            (["h", "hr", "hrs", "hour", "hours"], "h", 3_600),
            (["d", "day", "days"], "d", 86_400),
            (["w", "wk", "wks", "week", "weeks"], "w", 604_800),
        ]
        // All digits and a unit letter, yet no MaxAge: the number does not fit an Int.
        if number.allSatisfy(\.isNumber), number.count + 1 == argument.count, ["s", "m", "h", "d", "w"].contains(rest) {
            throw Problem.tooLong
        }
        guard let unit = units.first(where: { $0.names.contains(rest) }) else { throw Problem.notADuration }
        if number.contains(".") {
            let seconds = amount * unit.seconds
            let suggestion = seconds > 0 && seconds <= maximum.timeInterval ? MaxAge(seconds: seconds)?.description : nil
            throw Problem.notWhole(suggestion: suggestion)
        }
        throw Problem.spelledOut(suggestion: number + unit.letter)
    }

    init?(argument: String) {
        guard let parsed = try? Self.parse(argument) else { return nil }
        self = parsed
    }

    init(_ value: MaxAge) { self.value = value }

    var defaultValueDescription: String { value.description }
    var description: String { value.description }
}
