/// What ``EventLog/verify()`` found.
public struct VerifyReport: Sendable, Equatable {
    /// One thing found wrong.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The record (or checkpoint) the problem is at, when it has one.
        public var seq: UInt64?
        /// What is wrong, in words.
        public var message: String
        /// The damage is in data derived from the log (a state row, a checkpoint after the
        /// compaction base), which ``EventLog/rebuildState()`` restores from the log.
        public var fixedByRebuild = false
        /// The message, after the seq when there is one: `seq 12: …`.
        public var description: String { seq.map { "seq \($0): \(message)" } ?? message }
    }

    /// Records whose framing and checksum were checked.
    public var recordsChecked: Int
    /// Checkpoints decoded and compared with the fold of the log.
    public var checkpointsChecked: Int
    /// Everything found wrong, in the order found; empty when the database is clean.
    public var problems: [Problem]
    /// True when nothing was found wrong.
    public var isClean: Bool { problems.isEmpty }
}
