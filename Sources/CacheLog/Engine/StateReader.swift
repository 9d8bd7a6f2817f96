#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads the state: the `state` table's rows, each checked against its put where a reader judges
/// by it, or the fold of the log (the nearest checkpoint plus the tail) where a row is damaged or
/// a point in the past is asked for.
struct StateReader {
    /// The table handles.
    let schema: Tables
    /// The counters in `meta`.
    let counters: MetaCounters

    /// How a read of the live state treats the `state` table's rows.
    enum EntryRead {
        /// The row, or the fold of the log where the row does not decode: what appends, removals
        /// and retention judge by.
        case row
        /// The fold of the log alone.
        case log
        /// The row checked against the put it names (a put of the key with the row's timestamp),
        /// with that put's max age, metadata and recording time; the fold, with its put's, where
        /// the row does not decode or names another record (a flipped bit in its seq): what a
        /// reader judges the key by.
        case checked
        /// As `row`, then checked against its put as `checked` checks it, and nil where it fails
        /// or cannot be read: what a save's condition judges by, inside the write, so that a
        /// damaged row never makes a save wait for ever.
        case judgedForASave
    }

    /// The key's live entry, read as `read` says; `onDamaged` hears the key when its row is
    /// damaged (`rebuild` rewrites it).
    func entry(_ txn: Transaction, key: [UInt8], _ read: EntryRead = .row, onDamaged: ([String]) -> Void = { _ in }) throws -> LogState.Entry? {
        switch read {
        case .log: return try foldedState(txn).entry(forKey: key)
        case .judgedForASave: return try (try? entry(txn, key: key)).flatMap { try checkedAgainstItsPut($0, key: key, txn) }
        case .row, .checked: break
        }
        guard let raw = try txn.get(schema.state, key) else { return nil }
        let name = String(decoding: key, as: UTF8.self)
        if let row = StateRowCodec.decode(key: name, raw) {
            guard read == .checked else { return row }
            if let checked = try checkedAgainstItsPut(row, key: key, txn) { return checked }
        }
        onDamaged([name])
        let folded = try foldedState(txn).entry(forKey: key)
        return read == .checked ? try folded.map { try withRecordedPolicy($0, txn) } : folded
    }

    /// Every live entry, in key order: each row, or the fold of the log where a row does not
    /// decode (the log is folded once, and only for damage). A damaged record elsewhere in the
    /// log, which the fold takes as it reads it, must not change the answer for keys whose rows
    /// are whole.
    ///
    /// With `checked`, as a reader judges them: each row checked against its put and given its
    /// policy, as ``EntryRead/checked`` reads one; a row naming another record is answered from
    /// the fold when the log holds a live put of the key, and stays as stored, with what its
    /// record says, when it holds none, so that validation finds it and deletes it.
    func entries(_ txn: Transaction, checked: Bool = false, onDamaged: ([String]) -> Void = { _ in }) throws -> [LogState.Entry] {
        let (rows, malformed) = try self.rows(txn)
        var entries: [StateFold.Row] = []
        var misdirected: [StateFold.Row] = []
        for row in rows {
            if !checked {
                entries.append(row)
            } else if let entry = try checkedAgainstItsPut(row.entry, key: row.key, txn) {
                entries.append((row.key, entry))
            } else {
                misdirected.append(row)
            }
        }
        guard !malformed.isEmpty || !misdirected.isEmpty else { return entries.map(\.entry) }
        let folded = try foldedState(txn)
        var answered = malformed
        for key in malformed {
            if let entry = folded.entry(forKey: key) { entries.append((key, checked ? try withRecordedPolicy(entry, txn) : entry)) }
        }
        for row in misdirected {
            if let entry = folded.entry(forKey: row.key) {
                entries.append((row.key, try withRecordedPolicy(entry, txn)))
                answered.append(row.key)
            } else {
                entries.append((row.key, try withRecordedPolicy(row.entry, txn)))
            }
        }
        if !answered.isEmpty { onDamaged(answered.map { String(decoding: $0, as: UTF8.self) }) }
        return entries.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.entry)
    }

    /// Every row of the `state` table that decodes, with its key's bytes as the table holds them,
    /// and the keys of those that do not: the table as stored, for checking and copying it.
    func rows(_ txn: Transaction) throws -> (rows: [StateFold.Row], malformed: [[UInt8]]) {
        var rows: [StateFold.Row] = []
        var malformed: [[UInt8]] = []
        try txn.forEachRow(schema.state) { row in
            let key = String(decoding: row.key, as: UTF8.self)
            if let entry = StateRowCodec.decode(key: key, row.value) {
                rows.append((Array(row.key), entry))
            } else {
                malformed.append(Array(row.key))
            }
        }
        return (rows, malformed)
    }

    /// `entry` with the max age, metadata and recording time of its put. The state keeps only what
    /// folding needs; the policy stays in the put, one read away. A put that cannot be read
    /// leaves them empty (``EventLog/verify()`` names the damage).
    func withRecordedPolicy(_ entry: LogState.Entry, _ txn: Transaction) throws -> LogState.Entry {
        guard let record = try txn.get(schema.events, SeqKey.bytes(entry.seq)),
              let header = try? EventCodec.decodeHeader(record, seq: entry.seq, verifyChecksum: false)
        else { return entry }
        var entry = entry
        entry.maxAge = header.recordedMaxAge
        entry.recordedAt = Date(stamp: header.recordedAt)
        entry.metadata = (try? EventCodec.metadata(header, in: record, seq: entry.seq)) ?? [:]
        return entry
    }

    /// `entry` with its put's policy when the record at its seq is that put: a put of `key` with
    /// the row's timestamp; nil when the row names another record.
    private func checkedAgainstItsPut(_ entry: LogState.Entry, key: [UInt8], _ txn: Transaction) throws -> LogState.Entry? {
        guard let record = try txn.get(schema.events, SeqKey.bytes(entry.seq)),
              let header = try? EventCodec.decodeHeader(record, seq: entry.seq, verifyChecksum: false),
              header.kind == .put, EventCodec.keyBytes(header, in: record).elementsEqual(key),
              header.timestamp.bitPattern == entry.timestamp.stamp.bitPattern
        else { return nil }
        return try withRecordedPolicy(entry, txn)
    }

    /// The state according to the log alone (the nearest checkpoint plus the tail), as of
    /// the last committed seq: in a write transaction, without the events it has appended so far.
    func foldedState(_ txn: Transaction) throws -> StateFold {
        try foldedState(txn, asOf: try counters.lastSeq(txn))
    }

    /// Folds the records with seq in `range` into `folded`, reading headers only and checking
    /// their framing, not their checksums: a checksum covers the payload too, which a fold never
    /// reads, and appends applied every record whatever its later damage. `verify` checks every
    /// byte. A record whose framing fails is skipped and reported to `onCorrupt`.
    func fold(_ txn: Transaction, into folded: inout StateFold, range: ClosedRange<UInt64>,
              onCorrupt: (UInt64, CacheLogError) -> Void, onEvent: (UInt64, inout StateFold) throws -> Void = { _, _ in }) throws {
        try txn.withCursor(schema.events, from: .atLeast(SeqKey.bytes(range.lowerBound))) { rows in
            while let row = try rows.next(), let seq = SeqKey.decode(row.key), seq <= range.upperBound {
                do {
                    let header = try EventCodec.decodeHeader(row.value, seq: seq, verifyChecksum: false)
                    try folded.apply(header, record: row.value, seq: seq)
                } catch let error as CacheLogError {
                    onCorrupt(seq, error)
                }
                try onEvent(seq, &folded)
            }
        }
    }

    /// The state that stands for compacted history: the checkpoint at `base`, or an empty one
    /// when nothing was compacted (`base` is 0).
    func baseState(_ txn: Transaction, base: UInt64) throws -> StateFold {
        guard base > 0 else { return StateFold() }
        guard let raw = try txn.get(schema.checkpoints, SeqKey.bytes(base)) else {
            throw CacheLogError.corruptCheckpoint(seq: base, detail: "the compaction base checkpoint is missing")
        }
        return try CheckpointCodec.decode(raw, seq: base)
    }

    /// The seqs keyed in table `dbi` (events or checkpoints) from `from` up to, not including, `below`.
    func seqs(_ txn: Transaction, in table: Table, from: UInt64 = 0, below: UInt64 = .max) throws -> [UInt64] {
        try txn.withCursor(table, from: .atLeast(SeqKey.bytes(from))) { rows in
            var seqs: [UInt64] = []
            while let row = try rows.next(), let seq = SeqKey.decode(row.key), seq < below {
                seqs.append(seq)
            }
            return seqs
        }
    }

    /// The state after `seq`: the nearest checkpoint at or before it, plus the tail.
    ///
    /// Checkpoints are derived data: one that does not decode is passed over for an earlier one,
    /// or, before any compaction, for the log from its start. Only the compaction base checkpoint
    /// stands for records that are gone, so only its damage is an error.
    func foldedState(_ txn: Transaction, asOf seq: UInt64) throws -> StateFold {
        let base = try counters.baseSeq(txn)
        guard seq >= base else { throw CacheLogError.historyCompacted(firstAvailable: base) }
        var folded = StateFold()
        var start: UInt64 = 1
        let checkpoint: (UInt64, StateFold)? = try txn.withCursor(schema.checkpoints, from: .atMost(SeqKey.bytes(seq)), reverse: true) { rows in
            while let row = try rows.next(), let at = SeqKey.decode(row.key), at >= base {
                do {
                    return (at, try CheckpointCodec.decode(row.value, seq: at))
                } catch CacheLogError.corruptCheckpoint where at > base {
                    continue
                }
            }
            if base > 0 {
                throw CacheLogError.corruptCheckpoint(seq: base, detail: "the compaction base checkpoint is missing")
            }
            return nil
        }
        if let (at, snapshot) = checkpoint {
            folded = snapshot
            start = at + 1
        }
        if seq >= start {
            try fold(txn, into: &folded, range: start...seq, onCorrupt: { _, _ in })
        }
        return folded
    }
}
