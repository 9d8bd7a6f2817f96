import FeedCache
import Foundation
import Testing

/// How the package writes moments and durations, and reads them back, as an app's configuration
/// or logs would use them.
@Suite("Timestamps and durations as text")
struct TextTests {
    @Test(arguments: [0, 1_796_119_200, 1_796_119_200.25, -62_135_596_800, 253_402_300_799])
    func timestamp_readsBackWhatItWrites(_ seconds: Double) throws {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(TimestampText.date(TimestampText.string(date)) == date)
    }

    /// What a user types with milliseconds is what the package writes back, whatever double the
    /// text reads as: `.123` once came back as `.122`.
    @Test(arguments: ["2026-12-10T00:59:39.123Z", "2026-12-01T10:00:00.001Z", "1970-01-01T00:00:00.999Z", "1969-12-31T23:59:59.001Z",
                      "2100-02-28T23:59:59.999Z", "0001-01-01T00:00:00.500Z", "9999-12-31T23:59:59.999Z"])
    func timestamp_writesBackTheMillisecondsItRead(_ text: String) throws {
        let date = try #require(TimestampText.date(text))
        #expect(TimestampText.string(date) == text)
    }

    @Test func timestamp_takesAnOffsetOrABareDay_andRefusesAMomentWithoutAZone() {
        #expect(TimestampText.date("2026-12-01T11:00:00+01:00") == TimestampText.date("2026-12-01T10:00:00Z"))
        #expect(TimestampText.date("2026-12-01") == Date(timeIntervalSince1970: 1_796_083_200))
        for text in ["2026-12-01T10:00:00", "2026-12-01 10:00:00Z", "2026-12-01xyz", "2026-02-30", "2026-12-01T25:00:00Z", ""] {
            #expect(TimestampText.date(text) == nil, "\(text)")
        }
    }

    @Test func maxAge_parsesTheToolsGrammar_andSaysWhatToWriteInstead() throws {
        #expect(try MaxAge.parse("1w") == .days(7))
        #expect(try MaxAge.parse("90s") == .seconds(90))
        #expect(throws: MaxAge.ParseError.notWhole(suggestion: "36h")) { try MaxAge.parse("1.5d") }
        #expect(throws: MaxAge.ParseError.spelledOut(suggestion: "7d")) { try MaxAge.parse("7days") }
        #expect(throws: MaxAge.ParseError.negative) { try MaxAge.parse("-1d") }
        #expect(throws: MaxAge.ParseError.notPositive) { try MaxAge.parse("0s") }
        #expect(throws: MaxAge.ParseError.tooLong) { try MaxAge.parse("36501d") }
        // A capital unit is a unit written otherwise, not a number too long.
        #expect(throws: MaxAge.ParseError.spelledOut(suggestion: "1d")) { try MaxAge.parse("1D") }
        #expect(throws: MaxAge.ParseError.tooLong) { try MaxAge.parse("99999999999999999999d") }
        #expect(MaxAge.ParseError.notWhole(suggestion: "36h").description == "the number must be whole: write 36h; units are s, m, h, d and w")
    }
}
