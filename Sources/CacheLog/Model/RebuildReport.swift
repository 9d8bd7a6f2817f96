/// What ``EventLog/rebuildState()`` did.
public struct RebuildReport: Sendable, Equatable {
    /// Events read and folded into the state.
    public var eventsFolded: Int
    /// Keys with a live value after the rebuild.
    public var liveKeys: Int
    /// Records skipped because they failed their checks: their effect on the state is unknown.
    public var corruptSeqs: [UInt64]
    /// Keys whose stored state row was wrong (damaged, stale, missing or extra) and is now
    /// what the log says; empty when the state was already right.
    public var repairedKeys: [String] = []
    /// Checkpoints written because the stored one was missing or differed.
    public var checkpointsRewritten: Int = 0
    /// Checkpoints removed because the log does not place one there.
    public var checkpointsRemoved: Int = 0
    /// Counters of the `meta` table set back to what the log says (`lastSeq`, `lastRecordedAt`).
    public var restoredCounters: [String] = []
    /// Entries of the key index added (a record it did not list) or removed (an entry naming no
    /// record of its key).
    public var keyIndexEntriesRepaired: Int = 0
    /// Entries of the `refs` table (which puts need which record's payload bytes) added or removed.
    public var refsEntriesRepaired: Int = 0
}
