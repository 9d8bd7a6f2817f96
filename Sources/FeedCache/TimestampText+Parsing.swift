#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension TimestampText {
    /// The moment `text` writes, strictly: RFC 3339 with `Z` or an offset
    /// (`2026-12-01T10:00:00Z`, `2026-12-01T10:00:00.250+01:00`), or a bare day (`2026-12-01`,
    /// that day at 00:00 UTC); `nil` for anything else. What ``string(_:)`` writes reads back.
    ///
    /// Strict on purpose: a date without a zone, a space for the `T`, trailing text or a field out
    /// of range would otherwise give a confident answer about another moment. A leap second
    /// (second 60 of 23:59 UTC, as RFC 3339 allows) is the moment after 23:59:59: the clock this
    /// package keeps, as POSIX time does, has no leap seconds.
    package static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var reader = DigitReader(bytes)
        guard let year = reader.number(4), reader.expect("-"), let month = reader.number(2), reader.expect("-"),
              let day = reader.number(2), (1...12).contains(month), (1...daysIn(month, of: year)).contains(day)
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        if reader.atEnd { return Date(timeIntervalSince1970: Double(days) * 86_400) }
        guard reader.expect("T") || reader.expect("t"), let hour = reader.number(2), reader.expect(":"),
              let minute = reader.number(2), reader.expect(":"), let second = reader.number(2),
              hour < 24, minute < 60, second <= 60
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
        // Second 60 only ends a UTC day (23:59:60Z, or that minute in another zone).
        guard second < 60 || (seconds - 60) % 86_400 == 86_340 || (seconds - 60) % 86_400 == -60 else { return nil }
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
}
