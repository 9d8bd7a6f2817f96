/// What ``CacheLog/verify()`` found.
public struct VerifyReport: Sendable, Equatable {
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The record (or checkpoint) the problem is at, when it has one.
        public var seq: UInt64?
        public var message: String
        /// The damage is in data derived from the log (a state row, a checkpoint after the
        /// compaction base), which ``CacheLog/rebuildState()`` restores from the log.
        public var fixedByRebuild = false
        public var description: String { seq.map { "seq \($0): \(message)" } ?? message }
    }

    public var recordsChecked: Int
    public var checkpointsChecked: Int
    public var problems: [Problem]
    public var isClean: Bool { problems.isEmpty }
}
