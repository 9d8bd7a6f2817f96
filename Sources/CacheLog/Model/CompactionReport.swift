/// What ``EventLog/compact(before:)`` did.
public struct CompactionReport: Sendable, Equatable {
    /// Records removed from the log.
    public var removed: Int
    /// Records before the cut kept because the live state, or a payload after the cut, refers to them.
    public var keptLive: Int
    /// History before this seq is gone; state as of any later seq is still available.
    public var firstAvailable: UInt64
    /// Bytes of the history removed: its records, and 8 per key index entry. (Checkpoints are
    /// derived data: compaction writes one for the new base and drops those before it.) LMDB reuses their pages for
    /// later writes; the file itself does not shrink (LMDB's compacting copy makes a smaller one).
    public var bytesFreed: Int
}
