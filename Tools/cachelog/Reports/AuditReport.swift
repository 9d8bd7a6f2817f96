import FeedCacheLog

/// `audit --format json`: each key's cache timeline (``CacheAudit``), and the records the audit
/// could not read.
struct AuditReport: Encodable {
    struct Key: Encodable {
        let key: String
        let timeline: [AuditTimeline.Entry]
    }

    /// `--max-age` in seconds; `null`: each version was judged by its recorded policy.
    @NullWhenNil var maxAge: Double?
    let corruptSeqs: [UInt64]
    let keys: [Key]

    init(maxAge: Double?, audit: CacheAudit.Result) {
        self.maxAge = maxAge
        corruptSeqs = audit.corruptSeqs
        keys = audit.keys.map { Key(key: $0.key, timeline: $0.timeline) }
    }
}
