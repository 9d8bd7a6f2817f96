#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The state at one point of the log: every live key, sorted by key.
public struct LogState: Sendable, Equatable {
    /// The last sequence number folded into this state (0 for an empty log).
    public var seq: UInt64
    /// Every live key's entry, sorted by the key's UTF-8 bytes.
    public var entries: [Entry]
    /// Keys whose history retention trimmed past `seq`: their state at `seq` is not known any
    /// more, so they are left out of ``entries`` (sorted by UTF-8 bytes; empty for the state now).
    public var trimmed: [String]

    /// A state as of `seq` holding `entries`.
    public init(seq: UInt64, entries: [Entry], trimmed: [String] = []) {
        self.seq = seq
        self.entries = entries
        self.trimmed = trimmed
    }

    /// The entry whose key has exactly these UTF-8 bytes (keys are compared as LMDB compares them).
    public func entry(for key: String) -> Entry? { entries.first { $0.key.utf8.elementsEqual(key.utf8) } }
}

extension LogState {
    /// One entry of the state: the key's live `put`, without its payload.
    public struct Entry: Sendable, Equatable, Hashable {
        /// The cache key.
        public var key: String
        /// The sequence number of the `put` event.
        public var seq: UInt64
        /// The cache timestamp the put was given (when the value was cached, not recorded).
        public var timestamp: Date
        /// Uncompressed payload size.
        public var bytes: Int
        /// The seq of the record holding the payload bytes: `seq` itself, or an earlier put of the
        /// same key with an identical payload (identical payloads are stored once).
        public var payloadSeq: UInt64
        /// The maximum age, in seconds, the put was saved under, when it recorded one (filled in by
        /// the reads that return entries: ``EventLog/state()``, ``EventLog/state(asOf:)``, ``EventLog/entry(_:)``).
        public var maxAge: TimeInterval?
        /// The metadata the put was saved with (filled in as ``maxAge`` is).
        public var metadata: [String: String] = [:]
        /// When the put was recorded in the log (filled in as ``maxAge`` is). A ``timestamp``
        /// later than this was not taken by the clock that recorded the put, and cannot be trusted.
        public var recordedAt: Date?

        /// Same entries in the same order, keys compared byte for byte.
        static func sameEntries(_ a: [LogState.Entry], _ b: [LogState.Entry]) -> Bool {
            a.count == b.count && zip(a, b).allSatisfy { $0.key.utf8.elementsEqual($1.key.utf8) && $0 == $1 }
        }

        /// An entry; `payloadSeq` defaults to `seq` (the put holds its own bytes), and each other
        /// parameter sets the property of its name.
        public init(key: String, seq: UInt64, timestamp: Date, bytes: Int, payloadSeq: UInt64? = nil, maxAge: TimeInterval? = nil) {
            self.key = key
            self.seq = seq
            self.timestamp = timestamp
            self.bytes = bytes
            self.payloadSeq = payloadSeq ?? seq
            self.maxAge = maxAge
        }
    }
}
