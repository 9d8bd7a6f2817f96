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

    /// A state as of `seq` holding `entries`.
    public init(seq: UInt64, entries: [Entry]) {
        self.seq = seq
        self.entries = entries
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

        /// The log's last seq when the fetch whose payload this put holds began, as a conditional
        /// append recorded it (the metadata entry ``Event/sinceName``, filled in as ``maxAge`` is);
        /// `nil` for a put that recorded none (a plain append, a put written before the entry
        /// existed) or one whose entry is not decimal digits. A recorded seq at or past the put's
        /// own cannot be (the put landed after its fetch began) and reads as the seq before it, so
        /// that damage never makes a put newer than every save to come.
        public var since: UInt64? {
            guard let text = metadata[Event.sinceName], !text.isEmpty, text.utf8.count <= 20,
                  text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  let value = UInt64(text)
            else { return nil }
            return seq > 0 ? min(value, seq - 1) : 0
        }

        /// Whether this live put is newer, by the log's own order, than a save whose fetch began
        /// when the log's last seq was `position`, so that the save must not replace it: its own
        /// fetch began at or after `position` (of two fetches that began with nothing appended
        /// between them, the one that landed first stays); or, when it recorded no ``since``, it
        /// landed after `position`. Cache timestamps play no part: the clocks that took them may
        /// disagree.
        public func supersedes(aFetchBeganAt position: UInt64) -> Bool {
            if let since { return since >= position }
            return seq > position
        }

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
