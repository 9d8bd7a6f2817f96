#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A timestamp a write cannot give its items: a cache's timestamp is when its items were fetched,
/// a finite date no later than the client's clock (``FeedResource/write(_:timestamp:)``).
public struct InvalidTimestampError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The timestamp given.
    public let timestamp: Date
    /// The client's clock when it was refused.
    public let now: Date

    /// The sentence.
    public var description: String {
        let seconds = timestamp.timeIntervalSince1970
        guard seconds.isFinite else { return "a cache's timestamp must be a finite date, not \(seconds) seconds since 1970" }
        return "a cache's timestamp cannot be later than now: \(TimestampText.string(timestamp)) is after \(TimestampText.string(now))"
    }
}
