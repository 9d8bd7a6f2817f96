import CacheLog
import FeedCache
import FeedCacheLog

/// The policy a key's cache is judged by in `validate`, `state` and `audit`: the one its put
/// recorded, else the rule of databases written before puts recorded one (7 days, no contract,
/// the payload not decoded).
enum KeyPolicy {
    static let unrecorded = RecordedPolicy(maxAge: .days(7))

    static func of(_ entry: LogState.Entry) -> RecordedPolicy {
        CacheLogFeedStore.recordedPolicy(maxAge: entry.maxAge, metadata: entry.metadata) ?? unrecorded
    }

    /// The policy of a put as replay reads it; `nil` for other events.
    static func of(_ event: RecordedEvent) -> RecordedPolicy? {
        guard event.kind == .put else { return nil }
        return CacheLogFeedStore.recordedPolicy(maxAge: event.maxAge, metadata: event.metadata) ?? unrecorded
    }
}
