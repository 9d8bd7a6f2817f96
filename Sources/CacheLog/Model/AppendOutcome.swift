/// What a conditional append did (``EventLog/append(_:unlessSupersededSince:liveAt:leavingNewer:)``):
/// appended the batch, or left it out because the key's live entry is newer by the log's order
/// (its fetch began no earlier than the batch's, or, recording none, it landed after the batch's
/// fetch began).
public enum AppendOutcome: Sendable, Equatable {
    /// The batch was committed under these seqs, without the events of the keys `leftOut` (other
    /// keys of the batch whose live entries were newer).
    case appended(ClosedRange<UInt64>, leftOut: [String] = [])
    /// Nothing was written: the key's live entry, as the write transaction saw it, is newer. The
    /// entry carries its recorded max age and metadata, as ``EventLog/entry(_:)`` does, and so
    /// when its own fetch began (``LogState/Entry/since``).
    case superseded(by: LogState.Entry)
}
