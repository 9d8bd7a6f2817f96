#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decides whether a cache is still fresh: the one rule of the cache, as a pure function.
///
/// Ages are counted on the Gregorian calendar in UTC (see ``expiry(of:)``). A cache exactly ``maxAge`` old is
/// **expired**: only a cache strictly younger than the maximum age is valid.
public struct CachePolicy: Sendable, Hashable {
    /// How old a cache may get before it expires.
    public let maxAge: MaxAge

    /// Creates a policy whose caches expire once they are `maxAge` old.
    public init(maxAge: MaxAge) {
        self.maxAge = maxAge
    }

    /// Feeds expire after 7 days.
    public static let feeds = CachePolicy(maxAge: .days(7))

    /// Search results expire after 30 days.
    public static let search = CachePolicy(maxAge: .days(30))

    /// Whether a cache saved at `timestamp` is still valid at `date`.
    ///
    /// - Returns: `true` when `date` is at or after `timestamp` and strictly before
    ///   ``expiry(of:)``; `false` for a timestamp that is not a finite date, and for one later
    ///   than `date`: a cache stamped in the future was stamped by a clock that cannot be
    ///   trusted (one set ahead, or a caller's own timestamp), and would otherwise stay fresh for
    ///   as long as that clock was ahead, with a negative age.
    public func validate(_ timestamp: Date, against date: Date) -> Bool {
        guard let expiry = expiry(of: timestamp), timestamp <= date else { return false }
        return date < expiry
    }

    /// Whether a cache saved at `timestamp`, whose save was recorded at `recordedAt`, is still
    /// valid at `date`: as ``validate(_:against:)`` judges ``trustedTimestamp(_:recordedAt:)``.
    public func validate(_ timestamp: Date, recordedAt: Date?, against date: Date) -> Bool {
        validate(Self.trustedTimestamp(timestamp, recordedAt: recordedAt), against: date)
    }

    /// The moment a cache's age is counted from: its timestamp, or the moment its save was
    /// recorded when that is earlier. A store records a save after the saver took its timestamp,
    /// so a timestamp later than the recording was not taken by the recording clock: the cache
    /// is judged from when it was recorded instead.
    public static func trustedTimestamp(_ timestamp: Date, recordedAt: Date?) -> Date {
        guard let recordedAt, recordedAt < timestamp else { return timestamp }
        return recordedAt
    }

    /// The first instant at which a cache saved at `timestamp` is expired: `timestamp` + ``maxAge``,
    /// or `nil` when `timestamp` is not a finite date (a damaged record), which is never valid.
    ///
    /// Counted in seconds, which is exact on the UTC Gregorian calendar for every unit of
    /// ``MaxAge`` (a UTC day is 86,400 seconds). `Calendar` arithmetic gives up on amounts past
    /// its range, and a huge max age once read as "expired"; in seconds it lies far ahead.
    ///
    /// A `Date` is a double, so "exactly max age old" has two spellings that can round a unit in
    /// the last place apart: `timestamp + maxAge`, and a date whose `date - maxAge` is
    /// `timestamp` (75 of 100,000 random dates from 1970 to 2100). The expiry is the earlier of
    /// the two, so that a cache exactly max age old is expired by either count.
    public func expiry(of timestamp: Date) -> Date? {
        let saved = timestamp.timeIntervalSinceReferenceDate
        guard saved.isFinite else { return nil }
        let age = maxAge.timeInterval
        let sum = saved + age
        // Whether `date` is max age old counted back from it: monotone in `date`.
        func reached(_ date: Double) -> Bool { date - age >= saved }
        guard sum.isFinite, reached(sum.nextDown) else { return Date(timeIntervalSinceReferenceDate: sum) }
        // Rounding put the other count earlier: find its first instant by bisection, between a
        // date it has not reached and one it has.
        var reachedAt = sum.nextDown
        var step = sum.ulp
        var notYet = sum - step
        while reached(notYet) {
            reachedAt = notYet
            step *= 2
            notYet = sum - step
        }
        while true {
            let middle = notYet + (reachedAt - notYet) / 2
            guard middle != notYet, middle != reachedAt else { break }
            if reached(middle) { reachedAt = middle } else { notYet = middle }
        }
        return Date(timeIntervalSinceReferenceDate: reachedAt)
    }
}
