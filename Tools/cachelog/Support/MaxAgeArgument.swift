import ArgumentParser
import FeedCache

/// A `--max-age` value: `90s`, `15m`, `12h` or `7d`, more than zero and at most ``maximum``.
struct MaxAgeArgument: ExpressibleByArgument, CustomStringConvertible, Sendable {
    let value: MaxAge

    /// 100 years. Nothing is cached that long, and a bound keeps every date computed from a max
    /// age (the moment a cache goes stale) a date a calendar can show.
    static let maximum = MaxAge.days(36_500)

    /// What a command line gets wrong about a duration, in the words the error message uses.
    enum Problem: Error, CustomStringConvertible {
        case notADuration
        case notPositive
        case tooLong

        var description: String {
            switch self {
            case .notADuration: "write a whole number and a unit: 90s, 15m, 12h or 7d"
            case .notPositive: "the duration must be more than 0"
            case .tooLong: "the duration must be at most \(MaxAgeArgument.maximum) (100 years)"
            }
        }
    }

    /// Parses `argument`, saying what is wrong with it when it is not a usable max age. Give it to
    /// `@Option(transform:)` so that the usage error names the bound.
    static func parse(_ argument: String) throws -> MaxAgeArgument {
        guard let value = MaxAge(argument) else {
            // All digits with a unit, yet no MaxAge: the number does not fit an Int.
            let digits = argument.dropLast()
            if !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }), "smhd".contains(argument.last ?? "x") {
                throw Problem.tooLong
            }
            throw Problem.notADuration
        }
        guard value.timeInterval > 0 else { throw Problem.notPositive }
        guard value.timeInterval <= maximum.timeInterval else { throw Problem.tooLong }
        return MaxAgeArgument(value)
    }

    init?(argument: String) {
        guard let parsed = try? Self.parse(argument) else { return nil }
        self = parsed
    }

    init(_ value: MaxAge) { self.value = value }

    var defaultValueDescription: String { value.description }
    var description: String { value.description }
}
