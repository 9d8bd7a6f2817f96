import CacheLog
import FeedCache

extension RecordedPolicy {
    /// The rule of caches saved before puts recorded a policy: 7 days, no contract (the payload is
    /// not decoded).
    public static let unrecorded = RecordedPolicy(maxAge: .days(7))

    /// The policy that judges a live entry of the log: the one its put recorded, else
    /// ``unrecorded``. What `validate`, `state` and the audit judge each key by.
    public static func judging(_ entry: LogState.Entry) -> RecordedPolicy {
        CacheLogFeedStore.recordedPolicy(maxAge: entry.maxAge, metadata: entry.metadata) ?? unrecorded
    }

    /// The policy a put of the log recorded, as ``judging(_:)-(LogState.Entry)`` reads it; `nil`
    /// for an event that is not a put.
    public static func judging(_ event: RecordedEvent) -> RecordedPolicy? {
        guard event.kind == .put else { return nil }
        return CacheLogFeedStore.recordedPolicy(maxAge: event.maxAge, metadata: event.metadata) ?? unrecorded
    }
}
