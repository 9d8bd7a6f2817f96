import FeedAPI
import CacheLogReports
import FeedCacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension JSONText {
    /// A payload as JSON: when it is JSON, its own bytes without the whitespace between tokens
    /// (numbers and escapes exactly as stored, and always one line); else a base64 string.
    static func payload(_ data: Data) -> String {
        if let scanned = JSONScanner.scan(Array(data)) {
            return String(decoding: scanned.compact, as: UTF8.self)
        }
        return string(data.base64EncodedString())
    }
}
