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
    /// Set when the size limit cannot be met without dropping the history retention keeps: the
    /// pass let go what history it could and kept the live caches.
    public var unmetLimit: UnmetSizeLimit?

    /// A report of a pass started at `startedAt`; each parameter sets the property of its name.
    public init(startedAt: Date, removed: Int = 0, freedBytes: Int = 0, evicted: Int = 0, finished: Bool = false,
                unmetLimit: UnmetSizeLimit? = nil) {
        self.startedAt = startedAt
        self.removed = removed
        self.freedBytes = freedBytes
        self.evicted = evicted
        self.finished = finished
        self.unmetLimit = unmetLimit
    }
}

/// A size limit the database's floor does not leave room for beside its live caches: the pages
/// no eviction can free (each key's history, which keeps at least the record it starts from and
/// its entries in the key index, the checkpoints, LMDB's own pages) and the live caches, which
/// are within the limit themselves, need more. Evicting would pay for the floor with live
/// caches, so retention keeps them.
public struct UnmetSizeLimit: Sendable, Equatable, CustomStringConvertible {
    /// The size limit, in bytes.
    public var limit: Int
    /// About what the database needs with every live cache evicted, in bytes.
    public var floorBytes: Int
    /// About what the live caches hold, in bytes.
    public var liveBytes: Int
    /// The keys whose history that is.
    public var keys: Int

    /// A limit of `limit` bytes that a floor of `floorBytes`, the history of `keys` keys, does not
    /// meet beside `liveBytes` of live caches.
    public init(limit: Int, floorBytes: Int, liveBytes: Int, keys: Int) {
        self.limit = limit
        self.floorBytes = floorBytes
        self.liveBytes = liveBytes
        self.keys = keys
    }

    /// `the history of 420 keys needs about 1531904 bytes beside 8192 bytes of live caches: …`,
    /// in bytes (the tool shows sizes).
    public var description: String {
        "the history of \(keys) \(keys == 1 ? "key" : "keys") needs about \(floorBytes) bytes beside \(liveBytes) bytes of live caches: "
            + "the size limit of \(limit) bytes cannot be met without dropping that history, so the live caches stay"
    }
}

extension RetentionReport {
    /// What this pass did since it stood at `earlier` (the same pass, read before it went on):
    /// its counts less those.
    func since(_ earlier: RetentionReport) -> RetentionReport {
        var report = self
        report.removed = max(0, removed - earlier.removed)
        report.freedBytes = max(0, freedBytes - earlier.freedBytes)
        report.evicted = max(0, evicted - earlier.evicted)
        return report
    }

    /// The passes one call ran, as one report: from the first's start, their counts summed, the
    /// last's end and limit; nil for none.
    init?(combining passes: [RetentionReport]) {
        guard let first = passes.first, let last = passes.last else { return nil }
        self.init(startedAt: first.startedAt, removed: passes.reduce(0) { $0 + $1.removed },
                  freedBytes: passes.reduce(0) { $0 + $1.freedBytes }, evicted: passes.reduce(0) { $0 + $1.evicted },
                  finished: last.finished, unmetLimit: last.unmetLimit)
    }
}
