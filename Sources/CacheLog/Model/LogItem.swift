/// One record of the log as iteration delivers it: a decoded event, or a record that failed its
/// checks. A corrupt record is reported by its sequence number and never decoded into data.
public enum LogItem: Sendable, Equatable {
    /// A record that passed its checks, decoded.
    case event(RecordedEvent)
    /// The record at `seq` failed its checks, or (read with its payload) is built on a record
    /// that did: `detail` says which (`built on seq 20, which is corrupt: …` for the latter).
    case corrupt(seq: UInt64, detail: String)

    /// The record's sequence number, whether it decoded or not.
    public var seq: UInt64 {
        switch self {
        case .event(let event): return event.seq
        case .corrupt(let seq, _): return seq
        }
    }
}
