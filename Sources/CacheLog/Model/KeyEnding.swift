#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a key's last cache ended: the record that removed it (``EventLog/ending(of:)``), so that
/// "why is my cache gone?" has an answer where the cache was wanted.
public struct KeyEnding: Sendable, Equatable {
    /// What removed the cache.
    public enum Cause: Sendable, Equatable {
        /// A `delete` for this reason (``Event/DeletionReason/evicted`` for the size limit,
        /// ``Event/DeletionReason/explicit`` on request).
        case deleted(Event.DeletionReason)
        /// An `expire`: validation judged the version cached at `timestamp` too old under `maxAge`.
        case expired(timestamp: Date, maxAge: TimeInterval)
    }

    /// The seq of the record that removed it.
    public var seq: UInt64
    /// When that record was appended.
    public var recordedAt: Date
    /// What removed the cache: a delete and its reason, or an expire.
    public var cause: Cause
    /// For an eviction, the size limit that pressed, in bytes, when the eviction recorded it.
    public var sizeLimit: Int?

    /// An ending at `seq`, recorded at `recordedAt`; each parameter sets the property of its name.
    public init(seq: UInt64, recordedAt: Date, cause: Cause, sizeLimit: Int? = nil) {
        self.seq = seq
        self.recordedAt = recordedAt
        self.cause = cause
        self.sizeLimit = sizeLimit
    }
}
