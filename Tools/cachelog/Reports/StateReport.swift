import CacheLog
import FeedCache
import FeedCacheLog
import Foundation

/// `state --format json`: the live entries as of a point, each judged by the policy it was saved
/// under at `now`.
struct StateReport: Encodable {
    struct Entry: Encodable {
        let key: String
        let timestamp: Date
        let seq: UInt64, bytes: Int
        /// Seconds.
        let maxAge: Double
        @NullWhenNil var expires: Date?
        let fresh: Bool
        @NullWhenNil var contract: String?
        /// With `--payload`: what the cache held (its JSON, else base64; null when the put
        /// cannot be read back). Absent without `--payload`.
        var payload: RawJSON?

        init(_ entry: LogState.Entry, now: Date) {
            let policy = RecordedPolicy(of: entry)
            let rule = CachePolicy(maxAge: policy.maxAge)
            (key, timestamp, seq, bytes) = (entry.key, entry.timestamp, entry.seq, entry.bytes)
            maxAge = policy.maxAge.timeInterval
            expires = rule.expiry(of: entry.timestamp)
            fresh = rule.validate(entry.timestamp, against: now)
            contract = policy.contract
        }
    }

    let seq: UInt64
    let entries: [Entry]

    init(_ state: LogState, now: Date, payloads: [UInt64: Data?]? = nil) {
        seq = state.seq
        entries = state.entries.map { entry in
            var reported = Entry(entry, now: now)
            if let payloads { reported.payload = (payloads[entry.seq] ?? nil).map(RawJSON.init(payload:)) ?? RawJSON("null") }
            return reported
        }
    }
}
