import Foundation

extension URL {
    /// Whether the scheme is http or https: what `load` and `image` fetch, and what a next page or
    /// a person's own URL must be before the tool follows it.
    var isHTTP: Bool { ["http", "https"].contains(scheme?.lowercased()) }

    /// Whether the URL names no port or one a TCP connection can have: port 99999 would otherwise
    /// fail as "unreachable", and `load` would quietly serve the cache.
    var hasValidPort: Bool { port.map { (1...65_535).contains($0) } ?? true }
}
