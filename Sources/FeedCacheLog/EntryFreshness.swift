import CacheLog
import FeedCache
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A live entry of the log judged at a moment, as a reader that does not know the app judges it:
/// by the policy its put recorded (`RecordedPolicy/init(of:)-(LogState.Entry)`) or by one max
/// age for every key, its age counted from its trusted timestamp
/// (`CachePolicy/trustedTimestamp(_:recordedAt:)`). What `state` shows and `validate` acts on.
public struct EntryFreshness: Sendable, Equatable {
    /// The max age that judged it.
    public let maxAge: MaxAge
    /// The first moment it is expired; `nil` for a timestamp that is not a date.
    public let expiry: Date?
    /// Whether it is fresh at the moment it was judged.
    public let isFresh: Bool

    /// `entry` judged at `date`, by `maxAge` when given, else by its recorded policy.
    public init(_ entry: LogState.Entry, at date: Date, maxAge: MaxAge? = nil) {
        let maxAge = maxAge ?? RecordedPolicy(of: entry).maxAge
        let policy = CachePolicy(maxAge: maxAge)
        self.maxAge = maxAge
        expiry = policy.expiry(of: CachePolicy.trustedTimestamp(entry.timestamp, recordedAt: entry.recordedAt))
        isFresh = policy.validate(entry.timestamp, recordedAt: entry.recordedAt, against: date)
    }
}
