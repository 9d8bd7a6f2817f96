/// What a conditional append did (``EventLog/append(_:unlessNewerThan:liveAt:)``): appended the
/// batch, or left it out because the key's live entry was cached later than the batch's timestamp.
public enum AppendOutcome: Sendable, Equatable {
    /// The batch was committed under these seqs.
    case appended(ClosedRange<UInt64>)
    /// Nothing was written: the key's live entry, as the write transaction saw it, was cached
    /// later. The entry carries its recorded max age and metadata, as ``EventLog/entry(_:)`` does.
    case superseded(by: LogState.Entry)
}
