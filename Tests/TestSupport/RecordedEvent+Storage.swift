import CacheLog

extension RecordedEvent {
    /// Whether this is a put stored as a delta against an earlier put.
    public var isDelta: Bool {
        if case .delta = storage { true } else { false }
    }

    /// Whether this is a put that refers to an earlier put's identical payload.
    public var isReference: Bool {
        if case .reference = storage { true } else { false }
    }
}
