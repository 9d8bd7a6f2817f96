#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a conditional append did (``EventLog/append(_:unlessSupersededSince:liveAt:leavingNewer:)``):
/// appended the batch, or left it out because the key's live entry is newer by the log's order
/// (its fetch began no earlier than the batch's, or, recording none, it landed after the batch's
/// fetch began), or because the key was removed after the batch's fetch began.
public enum AppendOutcome: Sendable, Equatable {
    /// The batch was committed under these seqs, without the events of the keys `leftOut` (other
    /// keys of the batch whose live entries were newer).
    case appended(ClosedRange<UInt64>, leftOut: [String] = [])
    /// Nothing was written: the key's live entry, as the write transaction saw it, is newer. The
    /// entry carries its recorded max age and metadata, as ``EventLog/entry(_:)`` does, and so
    /// when its own fetch began (``LogState/Entry/since``).
    case superseded(by: LogState.Entry)
    /// Nothing was written: the key was removed (an explicit delete, at `seq`, recorded `at`)
    /// after the batch's fetch began, and the fetch's answer must not bring back what was removed.
    case removed(seq: UInt64, at: Date)
}
