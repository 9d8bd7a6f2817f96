import CacheLog
import FeedCache

/// A refused save as the event log tells it: the save it kept and when that one's request
/// began, or the removal, each by its seq.
extension NewerCacheError {
    /// The refusal a conditional append's `outcome` says (nil when it appended): the save kept
    /// and how far the log had got when its own request began, or the removal, for a save whose
    /// request began at `loadBegan`.
    public init?(_ outcome: AppendOutcome, loadBegan: UInt64) {
        switch outcome {
        case .appended:
            return nil
        case .superseded(let live):
            self.init(timestamp: live.timestamp, seq: live.seq, loadBegan: loadBegan, keptLoadBegan: live.since)
        case .removed(let seq, let at):
            self.init(timestamp: at, seq: seq, removal: true, loadBegan: loadBegan)
        }
    }
}
