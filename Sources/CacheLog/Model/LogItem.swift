/// One record of the log as iteration delivers it: a decoded event, or a record that failed its
/// checks. A corrupt record is reported by its sequence number and never decoded into data.
public enum LogItem: Sendable, Equatable {
    case event(RecordedEvent)
    case corrupt(seq: UInt64, detail: String)

    public var seq: UInt64 {
        switch self {
        case .event(let event): return event.seq
        case .corrupt(let seq, _): return seq
        }
    }
}
