import Foundation

/// Dates as the options take them, strictly: RFC 3339 with `Z` or an offset
/// (`2026-12-01T10:00:00Z`, `2026-12-01T10:00:00.250+01:00`), or a bare day (`2026-12-01`,
/// that day at 00:00 UTC). Anything else is refused rather than cut to a day: a date without
/// a zone, a space for the `T`, trailing text or a field out of range would otherwise give a
/// confident answer about another moment.
enum DateParsing {
    /// What the error messages show as the accepted forms.
    static let forms = "RFC 3339 with Z or an offset (2026-12-01T10:00:00Z, 2026-12-01T11:00:00+01:00) or a bare date (2026-12-01, midnight UTC)"

    static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var reader = DigitReader(bytes)
        guard let year = reader.number(4), reader.expect("-"), let month = reader.number(2), reader.expect("-"),
              let day = reader.number(2), (1...12).contains(month), (1...daysIn(month, of: year)).contains(day)
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        if reader.atEnd { return Date(timeIntervalSince1970: Double(days) * 86_400) }
        guard reader.expect("T") || reader.expect("t"), let hour = reader.number(2), reader.expect(":"),
              let minute = reader.number(2), reader.expect(":"), let second = reader.number(2),
              hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction = 0.0
        if reader.expect(".") {
            guard let digits = reader.digits(), !digits.isEmpty else { return nil }
            fraction = Double("0." + digits) ?? 0
        }
        var offset = 0
        if reader.expect("Z") || reader.expect("z") {
            offset = 0
        } else if let sign = reader.sign(), let hours = reader.number(2), reader.expect(":"), let minutes = reader.number(2),
                  hours < 24, minutes < 60 {
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard reader.atEnd else { return nil }
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 on the proleptic Gregorian calendar (Howard Hinnant's
    /// days_from_civil), so year 1 is not moved by the Julian calendar Foundation uses before 1582.
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Reads fixed-width ASCII fields off the front of a date.
    private struct DigitReader {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func expect(_ character: Character) -> Bool {
            guard index < bytes.count, let ascii = character.asciiValue, bytes[index] == ascii else { return false }
            index += 1
            return true
        }

        /// Exactly `count` digits.
        mutating func number(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<(index + count)] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        /// One or more digits (at most 9: nanoseconds), as text.
        mutating func digits() -> String? {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index - start <= 9 else { return nil }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func sign() -> Int? {
            if expect("+") { return 1 }
            if expect("-") { return -1 }
            return nil
        }
    }

    /// `2026-12-01T10:00:00Z`, with milliseconds only when the date has them.
    ///
    /// A stored date can be anything a damaged or hand-made record holds, and is shown, never
    /// trapped on: `nan`, `inf` or `-inf` when it is not a finite number, and `@` followed by its
    /// seconds since 1970 (as `date -d @…` takes them) when its year is outside 0000…9999.
    static func string(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `string(date)` cut to the whole second: a text table's date column is 20 wide, and a time
    /// with milliseconds (what the real clock gives) would push the rest of its row 4 columns
    /// past the header. JSON keeps the milliseconds.
    static func column(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        return string(seconds.isFinite ? Date(timeIntervalSince1970: seconds.rounded(.down)) : date)
    }

    /// Appends `string(date)`'s UTF-8 to `bytes`.
    ///
    /// Written by hand (days-to-civil, proleptic Gregorian, UTC) and straight into bytes: a replay
    /// prints two dates per line, and formatting them was most of the time of a long replay.
    static func append(_ date: Date, to bytes: inout [UInt8]) {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite else {
            bytes.append(contentsOf: NonFinite.text(seconds).utf8)
            return
        }
        let whole = seconds.rounded(.down)
        // Year 9999 ends before 2.6e11 seconds; beyond 1e13 the day arithmetic below could overflow.
        guard abs(whole) < 1e13 else {
            bytes.append(contentsOf: ("@" + JSONText.number(seconds)).utf8)
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

        // Foundation's formatter clamps such years to wrong dates; the seconds are at least true.
        if year < 0 || year > 9999 {
            bytes.append(contentsOf: ("@" + JSONText.number(seconds)).utf8)
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
