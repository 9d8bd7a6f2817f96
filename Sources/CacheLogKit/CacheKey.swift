#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The keys the package's resources cache under, one rule each, so that the tool, an app and a
/// cron job that reads the log all name a cache alike.
public enum CacheKey {
    /// A search's cache: `search:CONTRACT:QUERY` for the package's own contracts (`verses`,
    /// `people`), `search:app/CONTRACT:QUERY` for an app's, so that an app's contract of the same
    /// name never shares a cache with the package's (whose pages another program, the tool,
    /// would read and write under its own rules). The query exactly as typed (no trimming or
    /// case folding: two spellings are two searches).
    public static func search(contract: ContractName, query: String) -> String {
        "search:\(contract.isBuiltIn ? "" : appPrefix)\(contract.name):\(query)"
    }

    /// What an app's contract name is preceded by in a search key.
    static let appPrefix = "app/"

    /// The object cache of the resource at `url` as the tool is given it: the URL as `URL`
    /// spells it (non-ASCII percent-encoded), so that the tool and an app name one object alike.
    /// `nil` for text that is not a URL.
    public static func object(text url: String) -> String? {
        URL(string: url).map(object)
    }

    /// The object cache of the resource at `url`: `object:URL` (a person of the people search).
    public static func object(_ url: URL) -> String { "object:" + url.absoluteString }

    /// The image data at `url`: `image:URL`.
    public static func image(_ url: URL) -> String { CacheLogImageDataStore.key(for: url) }
}
