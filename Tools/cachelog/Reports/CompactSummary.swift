import CacheLog

/// `compact --format json`: what was removed and where history now starts.
struct CompactSummary: Encodable {
    let removed, bytesFreed, keptLive: Int
    let firstAvailable: UInt64

    init(_ report: CompactionReport) {
        (removed, bytesFreed, keptLive, firstAvailable) = (report.removed, report.bytesFreed, report.keptLive, report.firstAvailable)
    }

    /// A database not made yet: nothing removed, history starting at the beginning.
    static let nothing = CompactSummary()

    private init() {
        (removed, bytesFreed, keptLive, firstAvailable) = (0, 0, 0, 0)
    }
}
