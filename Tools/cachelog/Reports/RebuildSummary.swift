import CacheLog

/// `rebuild --format json`: what the rebuild folded, and what it repaired, restored or skipped.
struct RebuildSummary: Encodable {
    let events, liveKeys: Int
    let repairedKeys: [String]
    let checkpointsRewritten, checkpointsRemoved: Int
    let restoredCounters: [String]
    let corruptSeqs: [UInt64]
    let keyIndexEntriesRepaired: Int
    let refsEntriesRepaired: Int

    init(_ report: RebuildReport) {
        (events, liveKeys, repairedKeys) = (report.eventsFolded, report.liveKeys, report.repairedKeys)
        (checkpointsRewritten, checkpointsRemoved) = (report.checkpointsRewritten, report.checkpointsRemoved)
        (restoredCounters, corruptSeqs) = (report.restoredCounters, report.corruptSeqs)
        keyIndexEntriesRepaired = report.keyIndexEntriesRepaired
        refsEntriesRepaired = report.refsEntriesRepaired
    }
}
