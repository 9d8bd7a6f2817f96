#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MaxAge {
    /// 100 years. Nothing is cached that long, and a bound keeps every date computed from a max
    /// age (the moment a cache goes stale) a date a calendar can show.
    public static let maximum = MaxAge.days(36_500)

    /// The grammar, as errors say it.
    package static let forms = "a whole number and a unit: s, m, h, d or w (90s, 15m, 12h, 7d, 1w = 7d)"

    /// What a written duration gets wrong, as a sentence that says what to write instead.
    public enum ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not a number and a unit at all.
        case notADuration
        /// A fraction (`1.5d`); `suggestion` is the same amount in a smaller unit, when there is one.
        case notWhole(suggestion: String?)
        /// A unit spelled out or apart (`7days`, `7 d`); `suggestion` is how to write it.
        case spelledOut(suggestion: String)
        /// Zero, where a max age must be more.
        case notPositive
        /// A negative amount.
        case negative
        /// More than ``MaxAge/maximum``.
        case tooLong

        /// What is wrong and what to write instead.
        public var description: String {
            switch self {
            case .notADuration: "write \(MaxAge.forms)"
            case .notWhole(let suggestion?): "the number must be whole: write \(suggestion); units are s, m, h, d and w"
            case .notWhole(nil): "the number must be whole; use a smaller unit (s, m, h, d or w), e.g. 36h for 1.5d"
            case .spelledOut(let suggestion): "write the unit as one letter, with no space: \(suggestion) (units: s, m, h, d, w)"
            case .notPositive: "the duration must be more than 0 (e.g. 90s, 15m, 12h, 7d, 1w)"
            case .negative: "a negative duration is not allowed here; write \(MaxAge.forms)"
            case .tooLong: "the duration must be at most \(MaxAge.maximum) (100 years)"
            }
        }
    }

    /// A max age written as the tool and an app's configuration take it (`90s`, `15m`, `12h`,
    /// `7d`, `1w`): more than zero and at most ``maximum``.
    ///
    /// - Throws: ``ParseError``, saying what to write instead of the usual mistakes (`1.5d`,
    ///   `7days`, `-1d`).
    public static func parse(_ text: String) throws(ParseError) -> MaxAge {
        if text.hasPrefix("-") { throw .negative }
        let value = try duration(text)
        guard value.timeInterval > 0 else { throw .notPositive }
        return value
    }

    /// A duration written as ``parse(_:)`` takes it, zero allowed: a relative time (`7d` ago).
    ///
    /// - Throws: ``ParseError``.
    public static func duration(_ text: String) throws(ParseError) -> MaxAge {
        if let value = MaxAge(text) {
            guard value.timeInterval <= maximum.timeInterval else { throw .tooLong }
            return value
        }
        let trimmed = trimmingBlanks(text)
        let number = String(trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") })
        let rest = trimmingBlanks(trimmed.dropFirst(number.count)).lowercased()
        guard !number.isEmpty, let amount = Double(number), amount.isFinite else { throw .notADuration }
        let units: [(names: [String], letter: String, seconds: Double)] = [
            (["s", "sec", "secs", "second", "seconds"], "s", 1),
            (["m", "min", "mins", "minute", "minutes"], "m", 60),
            (["h", "hr", "hrs", "hour", "hours"], "h", 3_600),
            (["d", "day", "days"], "d", 86_400),
            (["w", "wk", "wks", "week", "weeks"], "w", 604_800),
        ]
        // All digits and a unit letter, yet no MaxAge: the number does not fit an Int. (A capital
        // letter, `1D`, is a unit written otherwise: its suggestion follows.)
        if number.allSatisfy(\.isNumber), number.count + 1 == text.count, ["s", "m", "h", "d", "w"].contains(String(text.suffix(1))) {
            throw .tooLong
        }
        guard let unit = units.first(where: { $0.names.contains(rest) }) else { throw .notADuration }
        if number.contains(".") {
            let seconds = amount * unit.seconds
            let suggestion = seconds > 0 && seconds <= maximum.timeInterval ? MaxAge(seconds: seconds)?.description : nil
            throw .notWhole(suggestion: suggestion)
        }
        throw .spelledOut(suggestion: number + unit.letter)
    }
}

/// `text` without the whitespace at its ends, as Foundation's `CharacterSet.whitespaces` counts
/// it (Unicode's space separators, the tab and the zero-width space), scalar by scalar.
private func trimmingBlanks(_ text: some StringProtocol) -> String {
    let isBlank = { (scalar: Unicode.Scalar) in
        scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
    }
    let scalars = Substring(text).unicodeScalars
    guard let first = scalars.firstIndex(where: { !isBlank($0) }), let last = scalars.lastIndex(where: { !isBlank($0) }) else { return "" }
    return String(Substring(scalars[first...last]))
}

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do): the sentence, not
// "The operation could not be completed."
extension MaxAge.ParseError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
