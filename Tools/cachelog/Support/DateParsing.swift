import FeedCache
import FeedCacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Dates as the options take them and the tables show them: the library's text for a moment
/// (``TimestampText``), read strictly and written to the second in text tables.
enum DateParsing {
    /// The moment an option gives (``TimestampText/date(_:)``), or `nil`.
    static func date(_ text: String) -> Date? { TimestampText.date(text) }

    /// What the error messages show as the accepted forms.
    static let forms = "RFC 3339 with Z or an offset (2026-12-01T10:00:00Z, 2026-12-01T11:00:00+01:00) or a bare date (2026-12-01, midnight UTC)"

    /// `2026-12-01T10:00:00Z`, with milliseconds only when the date has them (``TimestampText``: the
    /// library's audit and report write dates the same way).
    static func string(_ date: Date) -> String { TimestampText.string(date) }

    /// `string(date)` cut to the whole second: a text table's date column is 20 wide, and a time
    /// with milliseconds (what the real clock gives) would push the rest of its row 4 columns
    /// past the header. JSON keeps the milliseconds.
    static func column(_ date: Date) -> String {
        // Cut from the millisecond `string` writes, so that the two never show different seconds.
        let seconds = ((date.timeIntervalSince1970 * 1000).rounded() / 1000).rounded(.down)
        return string(seconds.isFinite ? Date(timeIntervalSince1970: seconds) : date)
    }

    /// Appends `string(date)`'s UTF-8 to `bytes`.
    static func append(_ date: Date, to bytes: inout [UInt8]) { TimestampText.append(date, to: &bytes) }
}
