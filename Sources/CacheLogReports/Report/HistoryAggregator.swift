import CacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FeedCache
import FeedCacheLog

/// Boils one key's history down to what the report (``HistoryReport``) draws and tabulates. The summary
/// (event counts, time stale and missing) is exact; what the page draws is bounded by `columns`
/// whatever the key's event count: up to `columns` events are marks of their own, more are
/// counted per column, and more than `2 × columns` bands are sampled per column. So the page
/// grows with keys × columns, not with events.
struct HistoryAggregator {
    let window: DateInterval
    let columns: Int
    let timeline: AuditTimeline

    /// `history`: the key's whole history up to the window's end (the bands at the window's start
    /// depend on what came before it); `corrupt`: its records that failed their checks.
    func key(_ history: KeyHistory, corrupt: Int) -> HistoryReport.Key {
        let events = history.events
        let entries = timeline.entries(history, now: window.end)
        let bands = CacheBands(entries, window: window)
        let shown = events.filter { window.contains($0.recordedAt) }
        let count = { (kind: EventKind) in shown.lazy.filter { $0.kind == kind }.count }
        let aggregated = shown.count > columns
        let counted = aggregated ? counts(shown) : (digits: "", overflow: [])
        return HistoryReport.Key(
            key: KeyText.escaped(history.key), puts: count(.put), deletes: count(.delete), expires: count(.expire), corrupt: corrupt,
            lastRefresh: events.last { $0.kind == .put && $0.recordedAt <= window.end }?.recordedAt,
            fresh: bands.duration(.fresh), stale: bands.duration(.stale), missing: bands.duration(.missing),
            state: bands.last, bands: encoded(bands),
            marks: aggregated ? [] : marks(shown, details: details(entries)),
            counts: counted.digits, overflow: counted.overflow)
    }

    /// The page's x for `date`: seconds after the window's start, to the millisecond.
    private func offset(_ date: Date) -> Double {
        (date.timeIntervalSince(window.start) * 1000).rounded() / 1000
    }

    private func column(_ date: Date) -> Int {
        guard window.duration > 0 else { return 0 }
        return min(columns - 1, max(0, Int(date.timeIntervalSince(window.start) / window.duration * Double(columns))))
    }

    /// The bands as the page's data carries them (``HistoryReport/Key/bands``).
    func encoded(_ bands: CacheBands) -> [Double] {
        if bands.bands.count <= 2 * columns {
            return deltas(bands.bands.flatMap { [offset($0.start), Double($0.state.rawValue)] })
        }
        // Each column takes the state that covered most of it; equal neighbours merge.
        var flat: [Double] = []
        var index = 0
        let width = window.duration / Double(columns)
        for column in 0..<columns {
            let start = window.start.addingTimeInterval(Double(column) * width)
            let end = start.addingTimeInterval(width)
            var covered: [CacheBands.State: TimeInterval] = [:]
            while index < bands.bands.count, bands.bands[index].end <= start { index += 1 }
            var look = index
            while look < bands.bands.count, bands.bands[look].start < end {
                let band = bands.bands[look]
                covered[band.state, default: 0] += min(band.end, end).timeIntervalSince(max(band.start, start))
                look += 1
            }
            let state = covered.max { $0.value < $1.value || ($0.value == $1.value && $0.key.rawValue < $1.key.rawValue) }?.key ?? .none
            if flat.last.map({ Int($0) != state.rawValue }) ?? true {
                flat += [offset(start), Double(state.rawValue)]
            }
        }
        return deltas(flat)
    }

    /// Each band's start as the time since the previous band's start: shorter numbers.
    private func deltas(_ flat: [Double]) -> [Double] {
        var previous = 0.0
        return flat.enumerated().map { index, value in
            guard index % 2 == 0 else { return value }
            defer { previous = value }
            return ((value - previous) * 1000).rounded() / 1000
        }
    }

    /// What the audit says of each event, by seq: the tooltip of its mark.
    private func details(_ entries: [AuditTimeline.Entry]) -> [UInt64: String] {
        var details: [UInt64: String] = [:]
        for entry in entries where entry.kind != .stale && entry.kind != .gap {
            if let seq = entry.seq { details[seq] = entry.text }
        }
        return details
    }

    private func marks(_ events: [RecordedEvent], details: [UInt64: String]) -> [HistoryReport.Mark] {
        events.map { event in
            let detail: String = switch event.kind {
            case .delete where event.reason == .replaced: "deleted (replaced): the first half of a save"
            case .delete: details[event.seq] ?? "deleted (\(event.reason?.name ?? "unknown"))"
            case .put, .expire, .retention: details[event.seq] ?? event.kind.name
            }
            return HistoryReport.Mark(offset: offset(event.recordedAt), kind: HistoryReport.Mark.Kind(event), seq: event.seq, detail: detail)
        }
    }

    /// The events per column and kind, densely: four characters per column (puts, deletes,
    /// expires, deletes that open a save), each a count from 0 to 60 as `0-9`, `a-y`, `A-Z`:
    /// about 1 KB per key. A larger count is written `z`, and the column's exact counts go to
    /// `overflow`.
    private func counts(_ events: [RecordedEvent]) -> (digits: String, overflow: [Int]) {
        var counts = [Int](repeating: 0, count: columns * 4)
        for event in events { counts[column(event.recordedAt) * 4 + HistoryReport.Mark.Kind(event).rawValue] += 1 }
        let digits = Array("0123456789abcdefghijklmnopqrstuvwxyABCDEFGHIJKLMNOPQRSTUVWXYZ")
        var overflow: [Int] = []
        for column in 0..<columns where counts[(column * 4)..<(column * 4 + 4)].contains(where: { $0 >= digits.count }) {
            overflow += [column] + counts[(column * 4)..<(column * 4 + 4)]
        }
        return (String(counts.map { $0 < digits.count ? digits[$0] : "z" }), overflow)
    }
}
