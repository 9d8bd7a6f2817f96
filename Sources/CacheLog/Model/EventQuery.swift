/// What to read from the log.
public struct EventQuery: Sendable, Equatable {
    /// First position to include (inclusive). A date means the first event recorded at or after it.
    public var from: LogPosition?
    /// Last position to include (inclusive). A date means the last event recorded at or before it.
    public var to: LogPosition?
    /// Only events about this key.
    public var key: String?
    /// Only these kinds (nil: all).
    public var kinds: Set<EventKind>?
    /// Newest first.
    public var reverse: Bool
    /// At most this many items.
    public var limit: Int?
    /// Inflate and return payloads (costs a decompression per `put`).
    public var includePayload: Bool

    /// A query; each parameter sets the property of its name. The default reads every event,
    /// oldest first, without payloads.
    public init(
        from: LogPosition? = nil, to: LogPosition? = nil, key: String? = nil,
        kinds: Set<EventKind>? = nil, reverse: Bool = false, limit: Int? = nil,
        includePayload: Bool = false
    ) {
        self.from = from
        self.to = to
        self.key = key
        self.kinds = kinds
        self.reverse = reverse
        self.limit = limit
        self.includePayload = includePayload
    }
}
