import Foundation

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
    /// - Returns: `true` when `date` is strictly before ``expiry(of:)``; `false` for a timestamp
    ///   that is not a finite date.
    public func validate(_ timestamp: Date, against date: Date) -> Bool {
        guard let expiry = expiry(of: timestamp) else { return false }
        return date < expiry
    }

    /// The first instant at which a cache saved at `timestamp` is expired: `timestamp` + ``maxAge``,
    /// or `nil` when `timestamp` is not a finite date (a damaged record), which is never valid.
    ///
    /// Counted in seconds, which is exact on the UTC Gregorian calendar for every unit of
    /// ``MaxAge`` (a UTC day is 86,400 seconds). `Calendar` arithmetic gives up on amounts past
    /// its range, and a huge max age once read as "expired"; in seconds it lies far ahead.
    public func expiry(of timestamp: Date) -> Date? {
        guard timestamp.timeIntervalSinceReferenceDate.isFinite else { return nil }
        return timestamp + maxAge.timeInterval
    }
}
