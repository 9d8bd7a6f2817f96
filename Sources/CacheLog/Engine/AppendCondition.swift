/// The precondition of a conditional append: the batch saves data whose fetch began when the log's
/// last seq was `since`, and it is not appended while `key`'s live put is newer by the log's own
/// order (``LogState/Entry/supersedes(aFetchBeganAt:)``), or when `key` was removed (an explicit
/// delete) after `since`. Checked by the writer inside the write
/// transaction, so every batch committed before it, in this process's group or by another process,
/// is seen.
///
/// Seqs are what every writer of the log shares; the cache timestamps are not compared, because the
/// clocks that took them may disagree (two processes, a `--now`, a clock set ahead).
struct AppendCondition: Sendable {
    var key: [UInt8]
    var since: UInt64
    /// Whether a failure leaves out the whole batch (the save) or only this key's events (an
    /// object saved beside a search, where the newer object stays and the rest is saved).
    var wholeBatch = true
    /// A removal's condition instead: the key's events go in only while the key has a live
    /// entry (`since` is then not read), so that a delete is recorded only of what is there.
    var requiresLive = false
}

/// What the writer appended of one batch: its seqs, and the keys whose events it left out
/// because their live entries were newer.
struct AppendedBatch: Sendable {
    var range: ClosedRange<UInt64>
    var leftOut: [[UInt8]]
    /// Its puts, in order, as stored: the seq of each and, when the record holds the payload
    /// (whole or a delta, not a reference), the CRC-32 it ends with.
    var puts: [StoredPut] = []
}

/// A put as the writer stored it (``AppendedBatch/puts``).
struct StoredPut: Sendable {
    var key: [UInt8]
    var seq: UInt64
    /// nil: a reference to an earlier put's payload.
    var checksum: UInt32?
}

/// A batch left out because its condition failed: how the writer answers the one append it
/// concerns while the rest of the group commits. Only a conditional append can meet it, and
/// ``EventLog/append(_:unlessSupersededSince:liveAt:leavingNewer:)`` turns it into ``AppendOutcome/superseded(by:)``.
struct SupersededBatch: Error {
    /// The newer live entry, or the removal's delete (its seq, its recorded time as timestamp).
    var live: LogState.Entry
    /// Whether `live` is a removal.
    var removal = false
}
