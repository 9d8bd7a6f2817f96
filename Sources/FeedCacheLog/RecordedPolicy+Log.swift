import CacheLog
import FeedCache

/// The rule that judges a cache in the log by the policy its put recorded: one rule for the
/// validation, the state and the audit.
extension RecordedPolicy {
    /// The policy of a cache whose put recorded none (a database written before puts recorded
    /// their policy, or a put of another writer): 7 days, and no contract, so its payload is
    /// never decoded to judge it.
    public static let unrecorded = RecordedPolicy(maxAge: .days(7))

    /// The policy a live cache is judged by when the app that saved it is not there to say (a
    /// validation, the state, an audit): the one its put recorded, else ``unrecorded``.
    public init(of entry: LogState.Entry) {
        self = CacheLogFeedStore.recordedPolicy(maxAge: entry.maxAge, metadata: entry.metadata) ?? .unrecorded
    }

    /// The policy the version a put wrote is judged by: the one it recorded, else ``unrecorded``,
    /// as a live entry is judged; `nil` for an event that is not a put.
    public init?(of event: RecordedEvent) {
        guard event.kind == .put else { return nil }
        self = CacheLogFeedStore.recordedPolicy(maxAge: event.maxAge, metadata: event.metadata) ?? .unrecorded
    }
}
