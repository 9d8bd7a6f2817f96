#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What retention did, as `stats` and `cachelog retention` report it: the last pass that ended,
/// or the one still going.
public struct RetentionReport: Sendable, Equatable {
    /// When the pass started (its clock: every window was measured back from it).
    public var startedAt: Date
    /// Records removed.
    public var removed: Int
    /// Bytes of records removed.
    public var freedBytes: Int
    /// Live entries dropped for the size limit (each a `delete` with reason `evicted`).
    public var evicted: Int
    /// Whether the pass is over.
    public var finished: Bool

    /// A report of a pass started at `startedAt`; each parameter sets the property of its name.
    public init(startedAt: Date, removed: Int = 0, freedBytes: Int = 0, evicted: Int = 0, finished: Bool = false) {
        self.startedAt = startedAt
        self.removed = removed
        self.freedBytes = freedBytes
        self.evicted = evicted
        self.finished = finished
    }
}
