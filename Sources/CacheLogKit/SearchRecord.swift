#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a search's put records beside its items, so that any later process can load more: the
/// query, the URL template, where the next page is, and when each page was fetched.
enum SearchRecord {
    /// Metadata names.
    static let queryName = "query"
    static let templateName = "template"
    static let nextName = "next"
    /// Each page's fetch time as seconds since 2001 (what a `Date` holds), read back `==`.
    static let pageTimesName = "page-times"
    /// Each page's fetch time as seconds since 1970, as puts recorded it before `page-times`:
    /// read, never written (the conversion rounds).
    static let legacyPagesName = "pages"

    /// Each page's fetch time, as the put records them under ``pageTimesName`` (the first is the
    /// put's own timestamp, which a later save of the list is compared with), separated by spaces.
    /// A list too long for a metadata value keeps its oldest time alone, which is what the list's
    /// age is counted from.
    static func pageTimesText(_ pages: [Date]) -> String {
        let text = pages.map { String($0.timeIntervalSinceReferenceDate) }.joined(separator: " ")
        guard text.utf8.count > 60_000, let oldest = pages.min() else { return text }
        return String(oldest.timeIntervalSinceReferenceDate)
    }

    /// The fetch times a put recorded; `fallback` (its timestamp) for a put written before pages
    /// were recorded, or with a list that does not read.
    static func pages(_ metadata: [String: String], fallback: Date) -> [Date] {
        if let text = metadata[pageTimesName] {
            return times(text).map { $0.map(Date.init(timeIntervalSinceReferenceDate:)) } ?? [fallback]
        }
        return metadata[legacyPagesName].flatMap(times).map { $0.map(Date.init(timeIntervalSince1970:)) } ?? [fallback]
    }

    /// The numbers of a space-separated list; nil unless there is one and every one is finite.
    private static func times(_ text: String) -> [Double]? {
        let seconds = text.split(separator: " ").map { Double($0) }
        guard !seconds.isEmpty, seconds.allSatisfy({ $0?.isFinite == true }) else { return nil }
        return seconds.compactMap { $0 }
    }
}
