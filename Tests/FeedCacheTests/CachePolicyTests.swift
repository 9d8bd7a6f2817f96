import FeedCache
import Foundation
import Seeding
import Testing

@Suite("Cache policy")
struct CachePolicyTests {
    @Test func feeds_expireAfterSevenDaysAndSearchResultsAfterThirtyDays() {
        #expect(CachePolicy.feeds.maxAge == .days(7))
        #expect(CachePolicy.search.maxAge == .days(30))
    }

    static let maxAges = [MaxAge.seconds(90), .minutes(15), .hours(12), .days(7), .days(30)]

    @Test(arguments: maxAges, currentDates)
    func validate_acceptsACacheOneSecondYoungerThanMaxAge(_ maxAge: MaxAge, now: Date) {
        let policy = CachePolicy(maxAge: maxAge)

        #expect(policy.validate(now.minus(maxAge).adding(seconds: 1), against: now))
    }

    @Test(arguments: maxAges, currentDates)
    func validate_rejectsACacheExactlyMaxAgeOld(_ maxAge: MaxAge, now: Date) {
        let policy = CachePolicy(maxAge: maxAge)

        #expect(!policy.validate(now.minus(maxAge), against: now))
    }

    @Test(arguments: maxAges, currentDates)
    func validate_rejectsACacheOneSecondOlderThanMaxAge(_ maxAge: MaxAge, now: Date) {
        let policy = CachePolicy(maxAge: maxAge)

        #expect(!policy.validate(now.minus(maxAge).adding(seconds: -1), against: now))
    }

    /// "Exactly max age old" said both ways, where a `Date`'s rounding makes them two instants: a
    /// cache saved at `now - maxAge` is expired at `now`, and one saved at `timestamp` is expired
    /// at `timestamp + maxAge`, although `(now - maxAge) + maxAge` is not `now` there. Such dates
    /// are rare (75 in 100,000 from 1970 to 2100), so the spec searches for them.
    @Test(arguments: maxAges)
    func validate_rejectsACacheExactlyMaxAgeOld_countedBackOrForward_whereTheTwoRoundApart(_ maxAge: MaxAge) throws {
        let policy = CachePolicy(maxAge: maxAge)
        let age = maxAge.timeInterval
        var generator = SeededGenerator(seed: 75)
        var found = 0
        // Near 2001 (a `Date`'s zero) the doubles' spacing changes most often.
        let span = Date(timeIntervalSinceReferenceDate: -4 * age)..<Date(timeIntervalSinceReferenceDate: 4 * age)
        for _ in 0..<200_000 where found < 20 {
            let now = generator.date(in: span)
            guard (now - age) + age != now else { continue }
            found += 1
            #expect(!policy.validate(now - age, against: now), "saved at \(now - age), judged at \(now)")
            let saved = now - age
            #expect(!policy.validate(saved, against: saved + age), "saved at \(saved), judged at \(saved + age)")
            #expect(policy.validate(saved, against: saved + (age - 1)), "a second younger is fresh")
        }
        #expect(found == 20, "\(found) dates whose two counts round apart")
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
