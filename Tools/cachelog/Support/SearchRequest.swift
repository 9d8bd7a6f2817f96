import Foundation

/// `load --query`: a search's URL template filled in, its cache key, and the page it loads.
///
/// The URL may hold `{query}` (percent-encoded in: everything but letters, digits and `-._~`)
/// and `{page}` (1 for the first page). A search's put records its query and, while the server
/// says there is more, where the next page is (metadata `next`): `load --more` continues from it.
struct SearchRequest: Sendable {
    let query: String
    let more: Bool

    /// The metadata names a search's put records.
    static let queryName = "query"
    static let nextName = "next"

    /// The default key of `query`'s cache under `contract`.
    static func key(contract: Contract, query: String) -> String {
        "search:\(contract.rawValue):\(query)"
    }

    /// `template` with `{query}` and `{page}` filled in.
    static func expand(_ template: String, query: String?, page: Int) -> String {
        var url = template.replacingOccurrences(of: "{page}", with: String(page))
        if let query { url = url.replacingOccurrences(of: "{query}", with: encoded(query)) }
        return url
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }
}
