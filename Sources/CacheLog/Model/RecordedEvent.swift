import Foundation

/// An event as read back from the log.
public struct RecordedEvent: Sendable, Equatable {
    /// The sequence number: its position in the log, starting at 1.
    public var seq: UInt64
    /// When the engine appended it (the engine's clock; never goes backward in the log).
    public var recordedAt: Date
    /// The record format version it was written with.
    public var formatVersion: UInt8
    public var kind: EventKind
    public var key: String
    /// `put`: when the value was cached. `expire`: the cache timestamp that was judged. `delete`: nil.
    public var timestamp: Date?
    /// `expire`: the maximum age, in seconds, that judged the value too old. `put`: the maximum
    /// age it was saved under, when it recorded one. `delete`: nil.
    public var maxAge: TimeInterval?
    /// `put` only: the metadata it was saved with (empty when none).
    public var metadata: [String: String] = [:]
    /// `delete` only.
    public var reason: DeleteReason?
    /// Size of the payload before compression (0 for delete and expire).
    public var payloadBytes: Int
    /// Size of the whole stored record: header, key, compressed body and checksum.
    public var storedBytes: Int
    /// The payload, when the read asked for it (`EventQuery.includePayload`).
    public var payload: Data?
}

/// One record of the log as iteration delivers it: a decoded event, or a record that failed its
/// checks. A corrupt record is reported by its sequence number and never decoded into data.
public enum LogItem: Sendable, Equatable {
    case event(RecordedEvent)
    case corrupt(seq: UInt64, detail: String)

    public var seq: UInt64 {
        switch self {
        case .event(let event): return event.seq
        case .corrupt(let seq, _): return seq
        }
    }
}

/// The live value of a key, as `CacheLog.retrieve(_:)` returns it.
public struct StoredValue: Sendable, Equatable {
    public var payload: Data
    /// The cache timestamp given when it was put.
    public var timestamp: Date
    /// The sequence number of the `put` event that holds it.
    public var seq: UInt64
    /// The maximum age, in seconds, it was saved under, when the put recorded one.
    public var maxAge: TimeInterval?
    /// The metadata it was saved with.
    public var metadata: [String: String] = [:]
}

/// One entry of the projection: the key's live `put`, without its payload.
public struct LiveEntry: Sendable, Equatable, Hashable {
    public var key: String
    /// The sequence number of the `put` event.
    public var seq: UInt64
    public var timestamp: Date
    /// Uncompressed payload size.
    public var bytes: Int
    /// The seq of the record holding the payload bytes: `seq` itself, or an earlier put of the
    /// same key with an identical payload (identical payloads are stored once).
    public var payloadSeq: UInt64
    /// The maximum age, in seconds, the put was saved under, when it recorded one (filled in by
    /// the reads that return entries: ``CacheLog/state()``, ``CacheLog/state(asOf:)``, ``CacheLog/entry(_:)``).
    public var maxAge: TimeInterval?
    /// The metadata the put was saved with (filled in as ``maxAge`` is).
    public var metadata: [String: String] = [:]

    /// Same entries in the same order, keys compared byte for byte.
    static func sameEntries(_ a: [LiveEntry], _ b: [LiveEntry]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.key.utf8.elementsEqual($1.key.utf8) && $0 == $1 }
    }

    public init(key: String, seq: UInt64, timestamp: Date, bytes: Int, payloadSeq: UInt64? = nil, maxAge: TimeInterval? = nil) {
        self.key = key
        self.seq = seq
        self.timestamp = timestamp
        self.bytes = bytes
        self.payloadSeq = payloadSeq ?? seq
        self.maxAge = maxAge
    }
}

/// The projection at one point of the log: every live key, sorted by key.
public struct LogState: Sendable, Equatable {
    /// The last sequence number folded into this state (0 for an empty log).
    public var seq: UInt64
    public var entries: [LiveEntry]

    /// The entry whose key has exactly these UTF-8 bytes (keys are compared as LMDB compares them).
    public func entry(for key: String) -> LiveEntry? { entries.first { $0.key.utf8.elementsEqual(key.utf8) } }
}

/// A point in the log: a sequence number, or a wall-clock date matched against `recordedAt`.
public enum LogPosition: Sendable, Hashable {
    case seq(UInt64)
    case date(Date)
}

/// What to read from the log.
public struct EventQuery: Sendable, Equatable {
    /// First position to include (inclusive). A date means the first event recorded at or after it.
    public var from: LogPosition?
    /// Last position to include (inclusive). A date means the last event recorded at or before it.
    public var to: LogPosition?
    /// Only events about this key.
    public var key: String?
    /// Only these kinds (nil: all).
    public var kinds: Set<EventKind>?
    /// Newest first.
    public var reverse: Bool
    /// At most this many items.
    public var limit: Int?
    /// Inflate and return payloads (costs a decompression per `put`).
    public var includePayload: Bool

    public init(
        from: LogPosition? = nil, to: LogPosition? = nil, key: String? = nil,
        kinds: Set<EventKind>? = nil, reverse: Bool = false, limit: Int? = nil,
        includePayload: Bool = false
    ) {
        self.from = from
        self.to = to
        self.key = key
        self.kinds = kinds
        self.reverse = reverse
        self.limit = limit
        self.includePayload = includePayload
    }
}
