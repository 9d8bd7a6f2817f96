#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `image --format json`: where the bytes came from, how many, and whether they are cached.
struct ImageReport: Encodable {
    enum Source: String, Encodable { case remote, cache }

    let source: Source
    let url, key: String
    let bytes: Int
    let cached: Bool
    let timestamp: Date
    /// Whole seconds.
    let age: Double
}
