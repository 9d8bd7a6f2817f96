/// What a conditional append did (``EventLog/append(_:unlessNewerThan:liveAt:leavingNewer:)``):
/// appended the batch, or left it out because the key's live entry was cached later than the
/// batch's timestamp.
public enum AppendOutcome: Sendable, Equatable {
    /// The batch was committed under these seqs, without the events of the keys `leftOut` (other
    /// keys of the batch whose live entries were newer).
    case appended(ClosedRange<UInt64>, leftOut: [String] = [])
    /// Nothing was written: the key's live entry, as the write transaction saw it, was cached
    /// later. The entry carries its recorded max age and metadata, as ``EventLog/entry(_:)`` does.
    case superseded(by: LogState.Entry)
}
