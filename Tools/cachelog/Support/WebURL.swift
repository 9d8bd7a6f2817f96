import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension URL {
    /// Whether the scheme is http or https: what `load` and `image` fetch, and what a next page or
    /// a person's own URL must be before the tool follows it.
    var isHTTP: Bool { ["http", "https"].contains(scheme?.lowercased()) }

    /// Checks what `load` and `image` take: an http(s) URL with a host and, if it names one, a
    /// port a TCP connection can have (port 99999 would otherwise fail as "unreachable", and
    /// `load` would quietly serve the cache). `text` is checked, `shown` named in the error.
    static func checkFetchable(_ text: String, shown: String, example: String) throws {
        guard let parsed = URL(string: text), parsed.isHTTP, parsed.host != nil else {
            throw ValidationError("'\(shown)' is not an http(s) URL; try \(example)")
        }
        if let port = parsed.port, !(1...65_535).contains(port) {
            throw ValidationError("'\(shown)' names port \(port); a port is 1 to 65535")
        }
    }
}
