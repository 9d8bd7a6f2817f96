import CacheLog

/// One key's history as the log still tells it: the version that was live at the compaction base,
/// then every event after the base.
///
/// A compaction removes the history before its base but keeps some older records: the puts of the
/// state at the base, and every put whose bytes a later put refers to (an unchanged payload is
/// stored once). Only the first are part of the story. A put kept only for its bytes is not a
/// version: told as one, it would stay live until the next surviving put and invent stale time
/// that the refreshes the compaction removed had covered.
public struct KeyHistory: Sendable, Equatable {
    /// The cache key.
    public var key: String
    /// The seq the log's history starts after (`EventLog.compactionBase()`); 0 when nothing
    /// was compacted.
    public var compactionBase: UInt64
    /// The seq retention trimmed this key's history to (`EventLog.historyStart(of:)`): the record
    /// there is the one its history now starts from; 0 when retention trimmed none of it.
    public var historyStart: UInt64
    /// In seq order: the put that was live at the compaction base, when the key had one (its
    /// seq is at or before ``compactionBase``), then the key's events after the base.
    public var events: [RecordedEvent]

    /// A history of `key` that starts after `compactionBase` (or at `historyStart`) with `events`.
    public init(key: String, compactionBase: UInt64 = 0, historyStart: UInt64 = 0, events: [RecordedEvent]) {
        self.key = key
        self.compactionBase = compactionBase
        self.historyStart = historyStart
        self.events = events
    }

    /// Whether `event` is where the history starts (the version live at the compaction base, or
    /// the record retention trimmed the history to: a version, or what left no cache) rather
    /// than an event after it.
    func isBaseVersion(_ event: RecordedEvent) -> Bool {
        event.seq <= compactionBase || (historyStart > compactionBase && event.seq == historyStart)
    }
}
