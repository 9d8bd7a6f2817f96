/// The precondition of a conditional append: the live entry of `key` must not have been cached
/// later than `notAfter` (stored seconds). Checked by the writer inside the write transaction, so
/// every batch committed before it, in this process's group or by another process, is seen.
struct AppendCondition: Sendable {
    var key: [UInt8]
    var notAfter: Double
}

/// A batch left out because its condition failed: how the writer answers the one append it
/// concerns while the rest of the group commits. Only a conditional append can meet it, and
/// ``EventLog/append(_:unlessNewerThan:liveAt:)`` turns it into ``AppendOutcome/superseded(by:)``.
struct SupersededBatch: Error {
    var live: LogState.Entry
}
