#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How the package writes a moment in text: `2026-12-01T10:00:00Z` (RFC 3339, UTC), with
/// milliseconds only when the moment has them. Errors, validation outcomes and the tool's
/// output all say dates this way, so that a date read in one can be pasted into another.
package enum TimestampText {
    /// `2026-12-01T10:00:00Z`, with milliseconds only when the date has them.
    ///
    /// A stored date can be anything a damaged or hand-made record holds, and is shown, never
    /// trapped on: `nan`, `inf` or `-inf` when it is not a finite number, and `@` followed by its
    /// seconds since 1970 (as `date -d @…` takes them) when its year is outside 0000…9999.
    package static func string(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `string(date)`'s UTF-8 to `bytes`.
    ///
    /// Written by hand (days-to-civil, proleptic Gregorian, UTC) and straight into bytes: a replay
    /// prints two dates per line, and formatting them was most of the time of a long replay.
    package static func append(_ date: Date, to bytes: inout [UInt8]) {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite else {
            bytes.append(contentsOf: NonFinite.text(seconds).utf8)
            return
        }
        // Year 9999 ends before 2.6e11 seconds; beyond 1e13 the day arithmetic below could overflow.
        guard abs(seconds) < 1e13 else {
            bytes.append(contentsOf: ("@" + number(seconds)).utf8)
            return
        }
        // The nearest millisecond, not the one below: `.123` reads as the double nearest to it,
        // which may lie a hair below, and must be written as `.123` again (truncating wrote `.122`).
        let inMilliseconds = Int((seconds * 1000).rounded())
        let milliseconds = inMilliseconds >= 0 ? inMilliseconds % 1000 : (1000 + inMilliseconds % 1000) % 1000
        let total = (inMilliseconds - milliseconds) / 1000
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

        // Foundation's formatter clamps such years to wrong dates; the seconds are at least true.
        if year < 0 || year > 9999 {
            bytes.append(contentsOf: ("@" + number(seconds)).utf8)
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

    /// Whole numbers without a fraction, others as Swift prints them (a finite `value`).
    package static func number(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
