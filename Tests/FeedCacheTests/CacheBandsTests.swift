import Foundation
import TestSupport
import Testing
@testable import CacheLogReports
@testable import FeedCacheLog

/// The report's bands, read off audit timelines written by hand: what the page draws for the
/// moments the browser test does not reach (a version stale before it was recorded, more bands
/// than the page has columns).
@Suite("Report bands", .hangGuard)
struct CacheBandsTests {
    let start = Date(timeIntervalSince1970: 1_796_083_200)
    func at(_ hours: Double) -> Date { start.addingTimeInterval(hours * 3600) }

    @Test
    func bands_followTheAudit_andStartWithWhatCameBeforeTheWindow() {
        let entries = [
            AuditTimeline.Entry(at: at(-10), kind: .written, seq: 2, text: ""),
            AuditTimeline.Entry(at: at(2), kind: .stale, seq: 2, text: ""),
            AuditTimeline.Entry(at: at(5), kind: .expired, seq: 3, text: ""),
            AuditTimeline.Entry(at: at(5), kind: .gap, seq: nil, text: ""),
            AuditTimeline.Entry(at: at(7), kind: .written, seq: 5, text: ""),
        ]
        let bands = CacheBands(entries, window: DateInterval(start: at(0), end: at(10)))
        #expect(bands.bands.map(\.state) == [.fresh, .stale, .missing, .fresh])
        #expect(bands.bands.map(\.start) == [at(0), at(2), at(5), at(7)])
        #expect(bands.duration(.stale) == 3 * 3600)
        #expect(bands.duration(.missing) == 2 * 3600)
        #expect(bands.last == .fresh)
    }

    /// A save stamped before the log's clock (a what-if `--now`) can be stale when it is recorded:
    /// its stale entry sorts before its write.
    @Test
    func aVersionStaleBeforeItWasRecorded_isStaleFromItsWrite() {
        let entries = [
            AuditTimeline.Entry(at: at(1), kind: .stale, seq: 4, text: ""),
            AuditTimeline.Entry(at: at(3), kind: .written, seq: 4, text: ""),
        ]
        let bands = CacheBands(entries, window: DateInterval(start: at(0), end: at(10)))
        #expect(bands.bands.map(\.state) == [CacheBands.State.none, .stale])
        #expect(bands.bands.map(\.start) == [at(0), at(3)])
    }

    @Test
    func moreBandsThanColumns_areSampledPerColumn_toTheStateThatCoveredMostOfIt() {
        // Fresh for 45 minutes, stale for 15, each hour for 1,000 hours: 2,000 bands.
        var entries: [AuditTimeline.Entry] = []
        for hour in 0..<1000 {
            entries.append(AuditTimeline.Entry(at: at(Double(hour)), kind: .written, seq: UInt64(hour + 1), text: ""))
            entries.append(AuditTimeline.Entry(at: at(Double(hour) + 0.75), kind: .stale, seq: UInt64(hour + 1), text: ""))
        }
        let window = DateInterval(start: at(0), end: at(1000))
        let bands = CacheBands(entries, window: window)
        #expect(bands.bands.count == 2000)
        let aggregator = HistoryAggregator(window: window, columns: 240, timeline: AuditTimeline(maxAge: nil))
        let data = aggregator.encoded(bands)
        // Every column is mostly fresh: one band.
        #expect(data == [0, Double(CacheBands.State.fresh.rawValue)])
        // The exact durations stay in the summary.
        #expect(bands.duration(.stale) == 1000 * 900)
    }
}
