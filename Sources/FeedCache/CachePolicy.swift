import Foundation

/// Decides whether a cache is still fresh: the one rule of the cache, as a pure function.
///
/// Ages are counted on the Gregorian calendar in UTC. A cache exactly ``maxAge`` old is
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
    /// - Returns: `true` when `date` is strictly before `timestamp` + ``maxAge``.
    public func validate(_ timestamp: Date, against date: Date) -> Bool {
        guard let expiry = Self.calendar.date(byAdding: maxAge.dateComponents, to: timestamp) else {
            return false
        }
        return date < expiry
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        return calendar
    }()
}
