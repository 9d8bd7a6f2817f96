import Foundation

/// The data of `cachelog report`'s page: each key's summary, its bands and its marks, in a form
/// whose size grows with keys × columns, not with events (see ``HistoryAggregator``). The page
/// embeds it as JSON and draws the timeline, the axis and the slider from it.
struct HistoryReport: Encodable {
    struct Key: Encodable {
        /// As the page shows it: control characters escaped as the text tables do (`\n`, `\u{1b}`).
        let key: String
        /// Events recorded in the window, by type, and records of the key that failed their checks.
        let puts: Int
        let deletes: Int
        let expires: Int
        let corrupt: Int
        /// The last put recorded at or before the window's end, in or before the window.
        @NullWhenNil var lastRefresh: Date?
        /// Seconds spent fresh, stale and missing within the window.
        let fresh: Double
        let stale: Double
        let missing: Double
        /// ``CacheBands/State`` at the window's end.
        let state: Int
        /// Flat pairs: a band's start in seconds after the previous band's start (the first's
        /// after the window's start), then its state. Exact, unless the key has more bands than twice the columns: then each column holds
        /// the state that covered most of it.
        let bands: [Double]
        /// Each event in the window (`[seconds after the start, kind, seq, detail]`, kind 0 put,
        /// 1 delete, 2 expire, 3 the delete that opens a save), when the key has at most as many
        /// as there are columns.
        let marks: [Mark]
        /// Otherwise the events counted per column and kind: four characters per column (puts,
        /// deletes, expires, deletes that open a save), a count from 0 to 60 as `0-9`, `a-y`,
        /// `A-Z`, or `z` for 61 or more …
        let counts: String
        /// … and, for each column with a count of 61 or more, `[column, puts, deletes, expires,
        /// save deletes]`, exactly.
        let overflow: [Int]
    }

    /// One event, as the page's tooltip shows it.
    struct Mark: Encodable {
        let offset: Double
        let kind: Int
        let seq: UInt64
        let detail: String

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(offset)
            try container.encode(kind)
            try container.encode(seq)
            try container.encode(detail)
        }
    }

    /// The window, as dates and as seconds since 1970 (for the page's arithmetic).
    let from: Date
    let to: Date
    let start: Double
    let span: Double
    /// How many columns the page divides the window into for bucketed marks and sampled bands.
    let columns: Int
    /// What was selected (`all keys`, `--key-prefix search:`), and the policy that judged staleness.
    let selection: String
    let judgedBy: String
    let generatedAt: Date
    let keys: [Key]
}
