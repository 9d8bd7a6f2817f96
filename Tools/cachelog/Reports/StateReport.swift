import CacheLog
import FeedCache
import FeedCacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
        /// Why the payload cannot be read back; present only then.
        var payloadError: String?

        init(_ entry: LogState.Entry, now: Date) {
            let policy = RecordedPolicy(of: entry)
            let judged = EntryFreshness(entry, at: now)
            (key, timestamp, seq, bytes) = (entry.key, entry.timestamp, entry.seq, entry.bytes)
            maxAge = judged.maxAge.timeInterval
            expires = judged.expiry
            fresh = judged.isFresh
            contract = policy.contract?.name
        }
    }

    let seq: UInt64
    let entries: [Entry]
    /// Keys whose history retention trimmed past `seq`: their state there is not known (absent
    /// when there are none).
    let trimmed: [String]?

    init(_ state: LogState, now: Date, payloads: [UInt64: StoredPayload]? = nil) {
        seq = state.seq
        trimmed = state.trimmed.isEmpty ? nil : state.trimmed
        entries = state.entries.map { entry in
            var reported = Entry(entry, now: now)
            switch payloads?[entry.seq] {
            case .bytes(let bytes)?: reported.payload = RawJSON(payload: bytes)
            case .unreadable(let why)?: (reported.payload, reported.payloadError) = (RawJSON("null"), why)
            case nil: break
            }
            return reported
        }
    }
}

/// A put's payload as `state --payload` read it back: its bytes, or why they cannot be read.
enum StoredPayload {
    case bytes(Data)
    case unreadable(String)
}
