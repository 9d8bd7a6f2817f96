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
    static let pagesName = "pages"

    /// Each page's fetch time, as the put records them: seconds since 1970, exact (the first is
    /// the put's own timestamp, which a later save of the list is compared with), separated by
    /// spaces. A list too long for a metadata value keeps its oldest time alone, which is what
    /// the list's age is counted from.
    static func pagesText(_ pages: [Date]) -> String {
        let text = pages.map { String($0.timeIntervalSince1970) }.joined(separator: " ")
        guard text.utf8.count > 60_000, let oldest = pages.min() else { return text }
        return String(oldest.timeIntervalSince1970)
    }

    /// The fetch times a put recorded; `fallback` (its timestamp) for a put written before pages
    /// were recorded, or with a list that does not read.
    static func pages(_ metadata: [String: String], fallback: Date) -> [Date] {
        let seconds = metadata[pagesName]?.split(separator: " ").map { Double($0) } ?? []
        guard !seconds.isEmpty, seconds.allSatisfy({ $0?.isFinite == true }) else { return [fallback] }
        return seconds.compactMap { $0.map(Date.init(timeIntervalSince1970:)) }
    }
}
