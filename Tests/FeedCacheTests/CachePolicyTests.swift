import FeedCache
import Foundation
import Testing

@Suite("Cache policy")
struct CachePolicyTests {
    @Test func feeds_expireAfterSevenDaysAndSearchResultsAfterThirtyDays() {
        #expect(CachePolicy.feeds.maxAge == .days(7))
        #expect(CachePolicy.search.maxAge == .days(30))
    }

    @Test(arguments: [MaxAge.seconds(90), .minutes(15), .hours(12), .days(7), .days(30)])
    func validate_acceptsACacheOneSecondYoungerThanMaxAge(_ maxAge: MaxAge) {
        let policy = CachePolicy(maxAge: maxAge)

        #expect(policy.validate(fixedCurrentDate.minus(maxAge).adding(seconds: 1), against: fixedCurrentDate))
    }

    @Test(arguments: [MaxAge.seconds(90), .minutes(15), .hours(12), .days(7), .days(30)])
    func validate_rejectsACacheExactlyMaxAgeOld(_ maxAge: MaxAge) {
        let policy = CachePolicy(maxAge: maxAge)

        #expect(!policy.validate(fixedCurrentDate.minus(maxAge), against: fixedCurrentDate))
    }

    @Test(arguments: [MaxAge.seconds(90), .minutes(15), .hours(12), .days(7), .days(30)])
    func validate_rejectsACacheOneSecondOlderThanMaxAge(_ maxAge: MaxAge) {
        let policy = CachePolicy(maxAge: maxAge)

        #expect(!policy.validate(fixedCurrentDate.minus(maxAge).adding(seconds: -1), against: fixedCurrentDate))
    }

    @Test func validate_rejectsEveryCacheWhenMaxAgeIsZero() {
        #expect(!CachePolicy(maxAge: .seconds(0)).validate(fixedCurrentDate, against: fixedCurrentDate))
    }

    @Test func validate_countsDaysOnTheUTCCalendarWhateverTheLocalTimeZone() {
        // 2024-03-31 is a 23-hour day in central Europe; in UTC every day has 24 hours.
        let saved = Date(timeIntervalSince1970: 1_711_843_200) // 2024-03-31T00:00:00Z
        let policy = CachePolicy(maxAge: .days(1))

        #expect(policy.validate(saved, against: saved + 86_399))
        #expect(!policy.validate(saved, against: saved + 86_400))
    }

    @Test(arguments: [MaxAge.seconds(.max), .minutes(.max), .hours(.max), .days(.max)])
    func validate_acceptsADayOldCacheUnderAMaxAgeBeyondTheCalendarsRange(_ maxAge: MaxAge) {
        let policy = CachePolicy(maxAge: maxAge)

        #expect(policy.validate(fixedCurrentDate.adding(days: -1), against: fixedCurrentDate))
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func validate_rejectsACacheWhoseTimestampIsNotAFiniteDate(_ seconds: Double) {
        let policy = CachePolicy(maxAge: .days(7))

        #expect(!policy.validate(Date(timeIntervalSince1970: seconds), against: fixedCurrentDate))
        #expect(policy.expiry(of: Date(timeIntervalSince1970: seconds)) == nil)
    }

    @Test func expiry_isTheTimestampPlusTheMaxAge() {
        #expect(CachePolicy(maxAge: .days(7)).expiry(of: fixedCurrentDate) == fixedCurrentDate + 604_800)
    }

    @Test(arguments: [
        (MaxAge.seconds(90), 90.0), (.minutes(15), 900.0), (.hours(12), 43_200.0), (.days(7), 604_800.0), (.days(30), 2_592_000.0),
    ])
    func maxAge_isRecordedInSeconds(_ maxAge: MaxAge, _ seconds: TimeInterval) {
        #expect(maxAge.timeInterval == seconds)
    }

    @Test(arguments: [("90s", MaxAge.seconds(90)), ("15m", .minutes(15)), ("12h", .hours(12)), ("7d", .days(7)), ("0s", .seconds(0))])
    func maxAge_parsesTheCommandLineSpelling(_ text: String, _ maxAge: MaxAge) {
        #expect(MaxAge(text) == maxAge)
        #expect(maxAge.description == text)
    }

    @Test(arguments: [("1w", MaxAge.days(7)), ("2w", .days(14)), ("0w", .days(0))])
    func maxAge_takesWeeks_asDays(_ text: String, _ maxAge: MaxAge) {
        #expect(MaxAge(text) == maxAge)
        #expect(MaxAge(maxAge.description) == maxAge)
    }

    @Test(arguments: ["", "7", "d", "-1d", "+7d", "1.5h", "7 d", "7days", "7D", "7W", " 7d", "1317624576693539402w"])
    func maxAge_rejectsAnythingElse(_ text: String) {
        #expect(MaxAge(text) == nil)
    }
}
