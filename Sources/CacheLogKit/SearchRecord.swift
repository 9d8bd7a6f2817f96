import Foundation

/// What a search's put records beside its items, so that any later process can load more: the
/// query, the URL template, where the next page is, and when each page was fetched.
enum SearchRecord {
    /// Metadata names.
    static let queryName = "query"
    static let templateName = "template"
    static let nextName = "next"
    static let pagesName = "pages"

    /// Each page's fetch time, as the put records them: RFC 3339 times separated by spaces. A
    /// list too long for a metadata value keeps its oldest time alone, which is what the list's
    /// age is counted from.
    static func pagesText(_ pages: [Date]) -> String {
        let text = pages.map(TimestampText.string).joined(separator: " ")
        guard text.utf8.count > 60_000, let oldest = pages.min() else { return text }
        return TimestampText.string(oldest)
    }

    /// The fetch times a put recorded; `fallback` (its timestamp) for a put written before pages
    /// were recorded, or with a list that does not read.
    static func pages(_ metadata: [String: String], fallback: Date) -> [Date] {
        let pages = metadata[pagesName]?.split(separator: " ").compactMap { try? Date(String($0), strategy: .iso8601) } ?? []
        return pages.isEmpty ? [fallback] : pages
    }
}
