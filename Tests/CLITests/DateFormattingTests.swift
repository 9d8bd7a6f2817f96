import CacheLogReports
import FeedCacheLog
import Foundation
import Testing
@testable import cachelog

@Suite("Date formatting")
struct DateFormattingTests {
    @Test func isoString_writesTheSecondAsFoundationDoes_andTheMillisecondItWasMadeWith_acrossCenturies() {
        var state: UInt64 = 42
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            // Seconds from 1900 to 2200, half of them with milliseconds.
            let seconds = Double(Int64(state >> 30) % 9_467_280_000 - 2_208_988_800)
            let millis = state & 1 == 0 ? 0 : Int((state >> 8) % 999 + 1)
            let date = Date(timeIntervalSince1970: seconds + Double(millis) / 1000)
            // The second as Foundation writes it, and the millisecond the date was made with, only
            // when it is not zero: the double nearest to `.726` may lie a hair below it, which
            // Foundation's formatter, truncating, writes as `.725`.
            let second = Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle())
            let expected = millis == 0 ? second : second.dropLast() + "." + String(format: "%03d", millis) + "Z"
            #expect(DateParsing.string(date) == expected)
            if DateParsing.string(date) != expected { break }
        }
        #expect(DateParsing.string(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(DateParsing.string(Date(timeIntervalSince1970: 1_796_119_200.5)) == "2026-12-01T10:00:00.500Z")
    }

    @Test func jsonString_escapesOnlyWhatJSONRequires() throws {
        for text in ["films", "search:love one another", "quote\"back\\slash", "line\nbreak\ttab\u{1}", "ünïcode ✓"] {
            let decoded = try JSONSerialization.jsonObject(with: Data(JSONText.string(text).utf8), options: .fragmentsAllowed)
            #expect(decoded as? String == text)
        }
    }
}
