import Foundation

extension URL {
    /// Whether the scheme is http or https: what `load` and `image` fetch, and what a next page or
    /// a person's own URL must be before the tool follows it.
    var isHTTP: Bool { ["http", "https"].contains(scheme?.lowercased()) }
}
