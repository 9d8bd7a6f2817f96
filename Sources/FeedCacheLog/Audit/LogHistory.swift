import CacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The histories of one key or of every key of a log (each a ``KeyHistory``), read in one pass,
/// and the records that could not be read.
public struct LogHistory: Sendable, Equatable {
    /// Each key with at least one event, in the byte order of the keys, as the log orders them
    /// (two keys that differ only in Unicode normalization are two keys).
    public var keys: [KeyHistory]
    /// The seqs of the records read that failed their checks: with a key, that key's only
    /// (`verify` names the damage).
    public var corruptSeqs: [UInt64]

    /// Reads the history of `key`, or of every key when it is `nil`, up to `end` (the log's end
    /// when `nil`).
    ///
    /// With a key it costs what that key's history has, through the key index. A record that
    /// fails its checks is not thrown: its seq is kept in ``corruptSeqs``.
    ///
    /// - Parameters:
    ///   - log: the log to read.
    ///   - key: only this key; every key when `nil`.
    ///   - end: the last position read; the log's end when `nil`.
    /// - Throws: `CacheLogError` when the log cannot be read.
    public init(log: EventLog, key: String? = nil, through end: LogPosition? = nil) throws {
        var read = try Self.read(log, key: key, through: end)
        // A compaction that lands during the read moves the base the events were sorted by:
        // read again, so that nothing it kept only for its bytes is told as a version.
        var reads = 1
        while reads < 8, try Self.base(log) != read.base {
            read = try Self.read(log, key: key, through: end)
            reads += 1
        }
        keys = read.keys
        corruptSeqs = read.corrupt
    }

    private static func read(_ log: EventLog, key: String?, through end: LogPosition?)
        throws -> (base: UInt64, keys: [KeyHistory], corrupt: [UInt64])
    {
        let base = try Self.base(log)
        let baseVersions = try Self.baseVersions(log, key: key, base: base)
        // Retention trims each key's history to a record of its own: before it, what is left was
        // kept only for its bytes; at it, the version the history starts from.
        let trims = try log.trimmedHistories()
        var events: [RecordedEvent] = []
        var corrupt: [UInt64] = []
        try log.forEachEvent(EventQuery(to: end, key: key)) { item in
            switch item {
            case .event(let event) where event.kind == .retention:
                break  // a policy, about no key: no cache's history
            case .event(let event) where (trims[Array(event.key.utf8)] ?? 0) > event.seq:
                break
            case .event(let event) where (trims[Array(event.key.utf8)] ?? 0) == event.seq:
                // Where the history starts: a version, or the delete or expire that left no cache
                // (an eviction among them: "why was my cache gone?" still has its answer).
                events.append(event)
            case .event(let event) where event.seq > base || (event.kind == .put && baseVersions.contains(event.seq)):
                events.append(event)
            case .event:
                break
            case .corrupt(let seq, _):
                corrupt.append(seq)
            }
            return true
        }
        let keys: [KeyHistory]
        if key != nil {
            keys = events.first.map { [KeyHistory(key: $0.key, compactionBase: base, historyStart: trims[Array($0.key.utf8)] ?? 0, events: events)] } ?? []
        } else {
            // Keyed by the key's bytes, as the log keys it: Swift's String equality would merge
            // keys that differ only in Unicode normalization (NFC and NFD "café").
            let byKey = Dictionary(grouping: events) { Array($0.key.utf8) }
            keys = byKey.keys.sorted { $0.lexicographicallyPrecedes($1) }.compactMap { bytes in
                byKey[bytes].flatMap { group in
                    group.first.map { KeyHistory(key: $0.key, compactionBase: base, historyStart: trims[bytes] ?? 0, events: group) }
                }
            }
        }
        return (base, keys, corrupt)
    }

    /// The compaction base. A damaged one (`verify` names it) is read as none, so that the
    /// history is still told, as it was before compaction kept records for their bytes.
    private static func base(_ log: EventLog) throws -> UInt64 {
        do {
            return try log.compactionBase()
        } catch CacheLogError.corruptMeta {
            return 0
        }
    }

    /// The seqs of the puts live at the compaction base: of `key`, or of every key.
    private static func baseVersions(_ log: EventLog, key: String?, base: UInt64) throws -> Set<UInt64> {
        guard base > 0 else { return [] }
        guard let key else {
            return try Self.checkpointed { Set(try log.state(asOf: .seq(base)).entries.map(\.seq)) } ?? []
        }
        return try baseEntry(log, key: key, base: base).map { [$0.seq] } ?? []
    }

    /// `key`'s live entry at the compaction base; none for a key no record can have (empty, or
    /// longer than the database takes), which the engine refuses to look up.
    private static func baseEntry(_ log: EventLog, key: String, base: UInt64) throws -> LogState.Entry? {
        guard base > 0, !key.utf8.isEmpty, key.utf8.count <= log.maxKeySize else { return nil }
        do {
            return try Self.checkpointed { try log.entry(key, asOf: .seq(base)).entry } ?? nil
        } catch CacheLogError.historyTrimmed {
            // Retention trimmed the key past the base: its story starts where retention left it.
            return nil
        }
    }

    /// `read`'s answer, or `nil` when the checkpoint of the compaction base is damaged (`verify`
    /// names it): the state there is then unknown, and the story starts after the base.
    private static func checkpointed<Value>(_ read: () throws -> Value) throws -> Value? {
        do {
            return try read()
        } catch CacheLogError.corruptCheckpoint {
            return nil
        }
    }

    /// When `key`'s history (as ``init(log:key:through:)`` reads it) starts: the time its first
    /// event was recorded, read without the rest; `nil` for a key without events.
    ///
    /// - Throws: `CacheLogError` when the log cannot be read.
    public static func start(of key: String, in log: EventLog) throws -> Date? {
        let base = try Self.base(log)
        let from = try baseEntry(log, key: key, base: base)?.seq ?? base + 1
        var first: Date?
        try log.forEachEvent(EventQuery(from: .seq(from), key: key)) { item in
            guard case .event(let event) = item else { return true }
            first = event.recordedAt
            return false
        }
        return first
    }
}
