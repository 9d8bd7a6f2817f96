#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The keys the package's resources cache under, one rule each, so that the tool, an app and a
/// cron job that reads the log all name a cache alike.
public enum CacheKey {
    /// A search's cache: `search:CONTRACT:QUERY`, the query exactly as typed (no trimming or case
    /// folding: two spellings are two searches).
    public static func search(contract: ContractName, query: String) -> String {
        "search:\(contract.name):\(query)"
    }

    /// The object cache of the resource at `url`: `object:URL` (a person of the people search).
    public static func object(_ url: URL) -> String { "object:" + url.absoluteString }

    /// The image data at `url`: `image:URL`.
    public static func image(_ url: URL) -> String { CacheLogImageDataStore.key(for: url) }
}
