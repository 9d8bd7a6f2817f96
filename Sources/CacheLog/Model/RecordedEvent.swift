#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An event as read back from the log.
public struct RecordedEvent: Sendable, Equatable {
    /// The sequence number: its position in the log, starting at 1.
    public var seq: UInt64
    /// When the engine appended it (the engine's clock; never goes backward in the log).
    public var recordedAt: Date
    /// The record format version it was written with: 3 from format 4 on (dates stored exactly),
    /// 1 or 2 before (`Format.md`, "Event records").
    public var formatVersion: UInt8
    /// Put, delete, expire or retention.
    public var kind: EventKind
    /// The cache key the event is about (empty for a retention).
    public var key: String
    /// `put`: when the value was cached. `expire`: the cache timestamp that was judged. `delete`: nil.
    public var timestamp: Date?
    /// `expire`: the maximum age, in seconds, that judged the value too old. `put`: the maximum
    /// age it was saved under, when it recorded one. `delete`: nil.
    public var maxAge: TimeInterval?
    /// `put`: the metadata it was saved with (empty when none). `retention`: the policy's
    /// entries (see ``retention``).
    public var metadata: [String: String] = [:]
    /// `delete` only.
    public var reason: Event.DeletionReason?
    /// Size of the payload before compression (0 for delete and expire).
    public var payloadBytes: Int
    /// Size of the whole stored record: header, key, compressed body and checksum.
    public var storedBytes: Int
    /// The payload, when the read asked for it (`EventQuery.includePayload`).
    public var payload: Data?
    /// `put`: how its record holds the payload; nil for other kinds.
    public var storage: PayloadStorage? = nil

    /// `retention` only: the policy it set and who set it.
    public var retention: (policy: RetentionPolicy, by: String)? {
        kind == .retention ? RetentionRecord.policy(metadata) : nil
    }
}

/// How a put's record holds its payload (`Format.md`: "Identical payloads are stored once", "A
/// refresh stores what changed").
public enum PayloadStorage: Sendable, Equatable {
    /// The whole payload, compressed.
    case whole
    /// No bytes of its own: the payload of the earlier put at `seq`, byte for byte.
    case reference(seq: UInt64)
    /// The changes from the payload of the earlier put at `base`.
    case delta(base: UInt64)
}
