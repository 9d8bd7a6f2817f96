import CacheLog
import FeedCache
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FeedCacheLog

/// The history of some keys over a window of time, as one self-contained HTML page (``html()``):
/// per key, bands of fresh, stale and missing time judged as `CacheAudit` judges them, a mark
/// for each event, and a summary table.
///
/// ```swift
/// let now = Date()
/// let report = try HistoryReport(log: log, keys: try log.keys(),
///                                window: DateInterval(start: now - 30 * 86_400, end: now), generatedAt: now)
/// try report.html().write(to: diagnostics.appending(path: "cache.html"), atomically: true, encoding: .utf8)
/// ```
///
/// Its size grows with keys × ``columns``, not with events: a key with more events in the window
/// than columns has them counted per column instead of a mark each, and a key with more than
/// twice as many bands as columns has, per column, the state that covered most of it. The
/// summary's numbers are always exact.
public struct HistoryReport: Sendable {
    /// One key's row.
    public struct Key: Sendable, Equatable {
        /// The key as the page shows it: control characters escaped as text tables do (`\n`,
        /// `\u{1b}`), so that a row stays one line.
        public let key: String
        /// Puts recorded in the window.
        public let puts: Int
        /// Deletes recorded in the window.
        public let deletes: Int
        /// Expires recorded in the window.
        public let expires: Int
        /// The key's records that failed their checks.
        public let corrupt: Int
        /// The last put recorded at or before the window's end, in or before the window.
        public let lastRefresh: Date?
        /// Seconds spent fresh within the window.
        public let fresh: Double
        /// Seconds spent stale within the window.
        public let stale: Double
        /// Seconds spent missing within the window.
        public let missing: Double
        /// The state at the window's end.
        public let state: CacheBands.State
        /// Flat pairs: a band's start in seconds after the previous band's start (the first's
        /// after the window's start), then its state's raw value. Exact, unless the key has more
        /// bands than twice the columns: then each column holds the state that covered most of it.
        public let bands: [Double]
        /// Each event in the window, when the key has at most as many as there are columns.
        public let marks: [Mark]
        /// Otherwise the events counted per column and kind: four characters per column (puts,
        /// deletes, expires, deletes that open a save), a count from 0 to 60 as `0-9`, `a-y`,
        /// `A-Z`, or `z` for 61 or more …
        public let counts: String
        /// … and, for each column with a count of 61 or more, `[column, puts, deletes, expires,
        /// save deletes]`, exactly.
        public let overflow: [Int]
    }

    /// One event, as the page's tooltip shows it.
    public struct Mark: Sendable, Equatable {
        /// Which event. The raw values are what the page's data carries.
        public enum Kind: Int, Sendable, CaseIterable {
            /// A put.
            case put = 0
            /// A delete that removed the cache.
            case delete = 1
            /// An expire.
            case expire = 2
            /// The delete that opens a save (reason replaced): drawn as part of the save's put.
            case saveDelete = 3

            init(_ event: RecordedEvent) {
                switch event.kind {
                case .put: self = .put
                case .delete where event.reason == .replaced: self = .saveDelete
                // A retention record is about no key, so no key's history holds one.
                case .delete, .retention: self = .delete
                case .expire: self = .expire
                }
            }
        }

        /// Seconds after the window's start, to the millisecond.
        public let offset: Double
        /// Which event.
        public let kind: Kind
        /// Its seq.
        public let seq: UInt64
        /// What the audit says of it.
        public let detail: String
    }

    /// Columns the window is divided into by default for counted marks and sampled bands: about
    /// a pixel column of the page's timeline at 1280 px wide, where a finer division could not be
    /// seen.
    public static let defaultColumns = 240

    /// The window the page shows.
    public let window: DateInterval
    /// How many columns the window is divided into for counted marks and sampled bands.
    public let columns: Int
    /// What was selected, as the page's title and header say it (`all keys` by default).
    public var selection: String
    /// What judged staleness, as the page's header says it.
    public var judgedBy: String
    /// When the report was made.
    public let generatedAt: Date
    /// The keys, in the order they were asked for.
    public let keys: [Key]

    /// Reads the history of each of `keys` up to the window's end, one key at a time (memory
    /// holds one key's events, not the log's), and sums it up over `window`.
    ///
    /// - Parameters:
    ///   - log: the log to read.
    ///   - keys: the keys to report, in the order of the page's rows.
    ///   - window: the time the page shows; what came before it decides each key's state at its start.
    ///   - maxAge: one max age for every version; `nil`: each version's recorded policy.
    ///   - columns: how finely the page draws a key with many events or bands (at least 1).
    ///   - generatedAt: the moment the report is made at, which judges a version still live at
    ///     the window's end, as the audit's `now` does.
    ///   - progress: called after each key with the number of keys done and of keys in all.
    public init(log: EventLog, keys: [String], window: DateInterval, maxAge: MaxAge? = nil,
                columns: Int = HistoryReport.defaultColumns, generatedAt: Date,
                progress: (_ done: Int, _ of: Int) -> Void = { _, _ in }) throws {
        let aggregator = HistoryAggregator(window: window, columns: max(1, columns), timeline: AuditTimeline(maxAge: maxAge))
        var reported: [Key] = []
        reported.reserveCapacity(keys.count)
        for (index, key) in keys.enumerated() {
            let history = try LogHistory(log: log, key: key, through: .date(window.end))
            reported.append(aggregator.key(history.keys.first ?? KeyHistory(key: key, events: []), corrupt: history.corruptSeqs.count))
            progress(index + 1, keys.count)
        }
        self.window = window
        self.columns = max(1, columns)
        self.selection = "all keys"
        self.judgedBy = maxAge.map { "max age \($0)" } ?? "each version's recorded max age"
        self.generatedAt = generatedAt
        self.keys = reported
    }

    /// The earliest moment the history of any of `keys` starts at (`LogHistory.start(of:in:)`):
    /// the natural start of a window over them; `nil` when none has events.
    ///
    /// - Throws: `CacheLogError` when the log cannot be read.
    public static func start(of keys: [String], in log: EventLog) throws -> Date? {
        try keys.compactMap { try LogHistory.start(of: $0, in: log) }.min()
    }

    /// The page: one HTML file with its CSS, its script and its data inline, so that it opens from
    /// `file://` with no network. Every key reaches it as text only.
    public func html() -> String { HistoryPage.html(self) }
}

// MARK: The page's data

extension HistoryReport {
    /// The data the page embeds and draws from, as JSON on one line. The window is there twice:
    /// as dates, and as `start` (seconds since 1970) and `span` (seconds) for the page's
    /// arithmetic. Written by hand: a report of a million events holds thousands of numbers per
    /// key, and the shape is fixed.
    func json() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(keys.count * 2_048 + 512)
        out += Array(#"{"from":"#.utf8)
        JSONText.appendDate(window.start, to: &out)
        out += Array(#","to":"#.utf8)
        JSONText.appendDate(window.end, to: &out)
        out += Array(#","start":\#(JSONText.number(window.start.timeIntervalSince1970)),"span":\#(JSONText.number(window.duration))"#.utf8)
        out += Array(#","columns":\#(columns),"selection":"#.utf8)
        JSONText.appendString(selection, to: &out)
        out += Array(#","judgedBy":"#.utf8)
        JSONText.appendString(judgedBy, to: &out)
        out += Array(#","generatedAt":"#.utf8)
        JSONText.appendDate(generatedAt, to: &out)
        out += Array(#","keys":["#.utf8)
        for (index, key) in keys.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            Self.append(key, to: &out)
        }
        out += Array("]}".utf8)
        return out
    }

    private static func append(_ key: Key, to out: inout [UInt8]) {
        out += Array(#"{"key":"#.utf8)
        JSONText.appendString(key.key, to: &out)
        out += Array(#","puts":\#(key.puts),"deletes":\#(key.deletes),"expires":\#(key.expires),"corrupt":\#(key.corrupt),"lastRefresh":"#.utf8)
        if let lastRefresh = key.lastRefresh { JSONText.appendDate(lastRefresh, to: &out) } else { out += Array("null".utf8) }
        out += Array(#","fresh":\#(JSONText.number(key.fresh)),"stale":\#(JSONText.number(key.stale)),"missing":\#(JSONText.number(key.missing))"#.utf8)
        out += Array(#","state":\#(key.state.rawValue),"bands":["#.utf8)
        for (index, value) in key.bands.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += Array(JSONText.number(value).utf8)
        }
        out += Array(#"],"marks":["#.utf8)
        for (index, mark) in key.marks.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += Array("[\(JSONText.number(mark.offset)),\(mark.kind.rawValue),\(mark.seq),".utf8)
            JSONText.appendString(mark.detail, to: &out)
            out.append(UInt8(ascii: "]"))
        }
        out += Array(#"],"counts":"#.utf8)
        JSONText.appendString(key.counts, to: &out)
        out += Array(#","overflow":["#.utf8)
        out += Array(key.overflow.map(String.init).joined(separator: ",").utf8)
        out += Array("]}".utf8)
    }
}
