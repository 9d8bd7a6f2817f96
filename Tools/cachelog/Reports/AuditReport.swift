import FeedCacheLog

/// `audit --format json`: each key's cache timeline (``CacheAudit``), and the records the audit
/// could not read.
struct AuditReport: Encodable {
    /// `--max-age` in seconds; `null`: each version was judged by its recorded policy.
    @NullWhenNil var maxAge: Double?
    let corruptSeqs: [UInt64]
    let keys: [CacheAudit.Key]

    init(maxAge: Double?, audit: CacheAudit.Result) {
        self.maxAge = maxAge
        corruptSeqs = audit.corruptSeqs
        keys = audit.keys
    }
}
