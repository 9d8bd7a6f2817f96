/// The precondition of a conditional append: the live entry of `key` must not have been cached
/// later than `notAfter` (stored seconds). Checked by the writer inside the write transaction, so
/// every batch committed before it, in this process's group or by another process, is seen.
///
/// A live entry counts as later only when its cache timestamp can be trusted: it is judged from
/// when it was recorded if its stamp is later than that, and one still later than the writer's
/// clock (a run whose clock was ahead, a damaged stamp) never wins: it would block every save of
/// its key until a validation removed it.
struct AppendCondition: Sendable {
    var key: [UInt8]
    var notAfter: Double
    /// Whether a failure leaves out the whole batch (the save) or only this key's events (an
    /// object saved beside a search, where the newer object stays and the rest is saved).
    var wholeBatch = true
}

/// What the writer appended of one batch: its seqs, and the keys whose events it left out
/// because their live entries were newer.
struct AppendedBatch: Sendable {
    var range: ClosedRange<UInt64>
    var leftOut: [[UInt8]]
}

/// A batch left out because its condition failed: how the writer answers the one append it
/// concerns while the rest of the group commits. Only a conditional append can meet it, and
/// ``EventLog/append(_:unlessNewerThan:liveAt:leavingNewer:)`` turns it into ``AppendOutcome/superseded(by:)``.
struct SupersededBatch: Error {
    var live: LogState.Entry
}
