/// Where a pass of retention stands between its slices, kept in `meta` (``RetentionState``), so
/// that the next slice (in this process or another) goes on from there.
struct RetentionPass: Sendable, Equatable {
    /// The pass's clock, a stamp: every window is measured back from it, whichever slice runs.
    var now: Double
    /// The last seq walked (0: the pass starts at the first record).
    var walkedThrough: UInt64 = 0
    /// With a size limit pressing: every record up to this seq counts as history outside its
    /// window, whatever the window (0: none).
    var pressureThrough: UInt64 = 0

    /// What one slice did.
    struct Slice: Sendable, Equatable {
        var removed = 0
        var freedBytes = 0
        /// Whether the walk reached the end of what the pass may remove.
        var done = false
    }
}
