#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decides what a slice removes: one per slice, holding what it looked up. The walk names the
/// candidates (history outside its key's window that is not the version the history starts from);
/// then, per key, those whose bytes a record that stays refers to stay.
struct HistoryJudge {
    let tables: LogTables
    let txn: Transaction
    let policy: RetentionPolicy
    let pass: RetentionPass
    /// The first seq recorded within each window, by window (seconds).
    private var windowStarts: [TimeInterval: UInt64] = [:]
    /// Per key: the window's start and the records kept as the version its history starts from.
    private var keys: [[UInt8]: KeyHistory] = [:]
    /// Records that may go, in seq order, with their keys.
    private(set) var candidates: [(seq: UInt64, key: [UInt8])] = []
    /// The compaction base, once looked up.
    private var base: UInt64?

    private struct KeyHistory {
        /// Records before this seq are outside the key's window (0: the key keeps all).
        var windowStart: UInt64
        /// The last record before the window, and, when that is an expire the key outlived, its live put.
        var kept: Set<UInt64>
        var boundary: UInt64?
        /// When the boundary is an expire that left the key absent: its last put or delete before
        /// it and the expires after that, which stay only while a put before them stays.
        var ending: [UInt64] = []
        /// The live put and the record that holds its bytes.
        var live: Set<UInt64>
    }

    init(tables: LogTables, txn: Transaction, policy: RetentionPolicy, pass: RetentionPass) {
        self.tables = tables
        self.txn = txn
        self.policy = policy
        self.pass = pass
    }

    /// The seq the walk stops at: the window's start of the shortest window (or the pressure's
    /// bound, when further): no record from there on is outside any window.
    mutating func walkEnd() throws -> UInt64 {
        let windows = ([policy.history] + policy.overrides.map { Optional($0.history) }).compactMap { $0 }
        var end = pass.pressureThrough + 1
        if let shortest = windows.min() { end = max(end, try windowStart(shortest)) }
        return end
    }

    private mutating func windowStart(_ window: TimeInterval) throws -> UInt64 {
        if let known = windowStarts[window] { return known }
        let start = try tables.positions.firstSeq(txn, recordedAtOrAfter: Date(stamp: pass.now - window))
        windowStarts[window] = start
        return start
    }

    /// Notes record `seq` of `key` as one that may go when it is history outside the key's window
    /// and not kept as the version the history starts from or the key's live cache. Whether a
    /// kept record still needs its bytes is asked when it is removed.
    mutating func consider(_ seq: UInt64, key: [UInt8]) throws {
        let history = try self.history(of: key)
        guard seq < history.windowStart, !history.kept.contains(seq), !history.live.contains(seq),
              let boundary = history.boundary, seq < boundary
        else { return }
        candidates.append((seq, key))
    }

    /// Where the history of `key` starts once its records before it are gone: the record kept
    /// as its first version.
    func historyStart(of key: [UInt8]) -> UInt64? { keys[key]?.boundary }

    /// Whether `seq` is one of the records that ended `key` before its boundary.
    func ended(_ key: [UInt8], at seq: UInt64) -> Bool { keys[key]?.ending.contains(seq) ?? false }

    /// The keys with records that ended them before their boundary, and those records.
    var endings: [(key: [UInt8], ending: [UInt64])] {
        keys.compactMap { key, history in history.ending.isEmpty ? nil : (key, history.ending) }
    }

    /// The candidates of `key`, in seq order.
    func candidates(of key: [UInt8]) -> [UInt64] {
        candidates.compactMap { $0.key == key ? $0.seq : nil }
    }

    /// Whether the records that ended `key` before its boundary may go: only when no put before
    /// them stays stored (nor the compaction base's checkpoint, which the fold starts from, holds
    /// the key), as without them the fold of what is left would make the key live again. A put
    /// that stays only for the bytes of what ended the key, or of another such put, goes with them.
    mutating func mayRemove(_ ending: [UInt64], of key: [UInt8]) throws -> Bool {
        guard let first = ending.first, try !startsLive(key, before: first) else { return false }
        let mayGo = Set(candidates(of: key))
        guard ending.allSatisfy(mayGo.contains) else { return false }
        let puts = try storedPuts(of: key, before: first)
        let going = Set(ending).union(puts)
        for put in puts {
            guard mayGo.contains(put), try !tables.refs.isPayloadSource(txn, put, ignoring: going) else { return false }
        }
        return true
    }

    private mutating func history(of key: [UInt8]) throws -> KeyHistory {
        if let known = keys[key] { return known }
        let live = try tables.state.entry(txn, key: key)
        let contract = try live.map { try tables.state.withRecordedPolicy($0, txn) }?.metadata["contract"]
        var windowStart: UInt64 = 0
        if let window = policy.history(forKey: String(decoding: key, as: UTF8.self), contract: contract) {
            windowStart = try self.windowStart(window)
        }
        // A size limit pressing: everything up to the pressure's bound is history, whatever the window.
        if pass.pressureThrough > 0 { windowStart = max(windowStart, pass.pressureThrough + 1) }
        var history = KeyHistory(windowStart: windowStart, kept: [], boundary: nil, live: Set([live?.seq, live?.payloadSeq].compactMap { $0 }))
        if windowStart > 1, let keyIndex = tables.schema.keyIndex {
            try txn.withCursor(keyIndex, from: .value(key: key, value: SeqKey.bytes(windowStart - 1), atMost: true), reverse: true) { seqs in
                guard let row = try seqs.next(), let boundary = SeqKey.decode(row.value) else { return }
                // A boundary the log cannot read (missing, or damaged past its framing) says
                // nothing of what it did to the key: its history stays whole, for verify to name
                // the damage. Cut there, the fold from the compaction base could make the key live
                // at a put that went.
                guard let record = try txn.get(tables.schema.events, SeqKey.bytes(boundary)),
                      let header = try? EventCodec.decodeHeader(record, seq: boundary, verifyChecksum: false)
                else { return }
                history.boundary = boundary
                history.kept.insert(boundary)
                // An expire removes only the version it judged: when it judged an earlier one, the
                // key's last put before it is still live after it and stays with it; when it (or
                // one before it) removed the key, or a delete did, what ended the key is noted.
                guard header.kind == .expire else { return }
                var judged: Set<UInt64> = [header.timestamp.bitPattern]
                var expires: [UInt64] = []
                while let earlier = try seqs.next(), let seq = SeqKey.decode(earlier.value) {
                    guard let previous = try txn.get(tables.schema.events, SeqKey.bytes(seq)),
                          let previousHeader = try? EventCodec.decodeHeader(previous, seq: seq, verifyChecksum: false)
                    else { continue }
                    switch previousHeader.kind {
                    case .expire:
                        judged.insert(previousHeader.timestamp.bitPattern)
                        expires.append(seq)
                        continue
                    case .put where !judged.contains(previousHeader.timestamp.bitPattern):
                        history.kept.insert(seq)
                    case .put, .delete:
                        history.ending = [seq] + expires.reversed()
                    case .retention:
                        break
                    }
                    return
                }
            }
        }
        keys[key] = history
        return history
    }

    /// Whether the fold of the log starts with `key` live before `seq`: the compaction base's
    /// checkpoint, which stands for the history before it, holds the key.
    private mutating func startsLive(_ key: [UInt8], before seq: UInt64) throws -> Bool {
        if base == nil { base = try tables.counters.baseSeq(txn) }
        guard let base, base > 0, seq > base, let raw = try txn.get(tables.schema.checkpoints, SeqKey.bytes(base)) else { return false }
        do {
            return try CheckpointCodec.entry(forKey: key, in: raw, seq: base) != nil
        } catch {
            return true  // a base checkpoint that does not decode: keep what ended the key, as if it held it
        }
    }

    /// The puts of `key` still stored before `seq` whose framing reads.
    private func storedPuts(of key: [UInt8], before seq: UInt64) throws -> [UInt64] {
        guard let keyIndex = tables.schema.keyIndex else { return [] }
        var found: [UInt64] = []
        try txn.withCursor(keyIndex, from: .value(key: key, value: SeqKey.bytes(0), atMost: false)) { seqs in
            while let row = try seqs.next(), let put = SeqKey.decode(row.value), put < seq {
                guard let record = try txn.get(tables.schema.events, SeqKey.bytes(put)),
                      let header = try? EventCodec.decodeHeader(record, seq: put, verifyChecksum: false),
                      header.kind == .put
                else { continue }
                found.append(put)
            }
        }
        return found
    }
}
