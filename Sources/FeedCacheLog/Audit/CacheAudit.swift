import CacheLog
import FeedCache
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// "Why was it stale?", answered from a log: each key's ``AuditTimeline``, ready for an app's own
/// diagnostics.
///
/// ```swift
/// let audit = CacheAudit(log: log)
/// for entry in try audit.timeline(of: "films", now: Date()) {
///     print(entry.at, entry.kind, entry.text)   // … stale  seq 2 became stale (max age 7d)
/// }
/// ```
public struct CacheAudit: Sendable {
    /// One key's story; encoded as `{"key", "timeline"}`.
    public struct Key: Sendable, Equatable, Encodable {
        /// The cache key.
        public var key: String
        /// Its timeline, in time order.
        public var timeline: [AuditTimeline.Entry]
    }

    /// The audit of a log, or of one of its keys.
    public struct Result: Sendable, Equatable {
        /// Each key with events, in the byte order of the keys.
        public var keys: [Key]
        /// The records that failed their checks and were left out (`verify` names the damage).
        public var corruptSeqs: [UInt64]
    }

    /// The log the histories are read from.
    public let log: EventLog
    /// How each version is judged.
    public let timeline: AuditTimeline

    /// Audits `log`, judging every version by `maxAge`, or each by the policy its put recorded
    /// when `nil` (7 days for a put that recorded none).
    public init(log: EventLog, maxAge: MaxAge? = nil) {
        self.log = log
        self.timeline = AuditTimeline(maxAge: maxAge)
    }

    /// The timelines of `key`, or of every key when it is `nil`, judged at `now`.
    ///
    /// - Parameters:
    ///   - key: only this key; every key when `nil`.
    ///   - now: the moment versions are judged at, and the last gap ends.
    /// - Returns: Each key's timeline, and the records left out as corrupt.
    /// - Throws: `CacheLogError` when the log cannot be read (``LogHistory/init(log:key:through:)``).
    public func timelines(of key: String? = nil, now: Date) throws -> Result {
        let history = try LogHistory(log: log, key: key)
        return Result(keys: history.keys.map { Key(key: $0.key, timeline: timeline.entries($0, now: now)) },
                      corruptSeqs: history.corruptSeqs)
    }

    /// The timeline of `key` judged at `now`; empty for a key without events.
    ///
    /// - Throws: `CacheLogError` when the log cannot be read.
    public func timeline(of key: String, now: Date) throws -> [AuditTimeline.Entry] {
        try timelines(of: key, now: now).keys.first?.timeline ?? []
    }
}
