import CacheLog
import Foundation

/// `audit --format json`: each key's cache timeline, and the records the audit could not read.
struct AuditReport: Encodable {
    struct Key: Encodable {
        let key: String
        let timeline: [AuditTimeline.Entry]
    }

    /// `--max-age` in seconds; `null`: each version was judged by its recorded policy.
    @NullWhenNil var maxAge: Double?
    let corruptSeqs: [UInt64]
    let keys: [Key]
}
