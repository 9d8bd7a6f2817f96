#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The key index (``Tables/keyIndex``): each key's seqs, so that one key's history costs what
/// that key has, not what the log has. Derived from the log like the state: appends keep it,
/// `rebuildState()` repairs it, `verify()` checks it, compaction trims it.
struct KeyIndex {
    /// The table handles.
    let schema: Tables
    /// The counters in `meta`.
    let counters: MetaCounters
    /// The state, for a key as of a seq without the index.
    let state: StateReader

    /// Indexes the record `seq` under `key`, in the append's transaction. A seq sorts after every
    /// seq the key has, so the value goes at the end of the key's run.
    @available(*, noasync)
    func index(_ txn: Transaction, key: [UInt8], seq: UInt64) throws {
        guard let keyIndex = schema.keyIndex else { return }
        do {
            try txn.put(keyIndex, key, SeqKey.bytes(seq), options: .appendDuplicate)
        } catch let error as CacheLogError where error.isKeyExists {
            // A damaged index holds a later seq for the key: put it in its place instead of
            // failing the append (verify names the damage; rebuild removes it).
            try txn.put(keyIndex, key, SeqKey.bytes(seq))
        }
    }

    /// Removes the record `seq` of `key` from the index (compaction). Returns false when it was not listed.
    @available(*, noasync)
    func unindex(_ txn: Transaction, key: [UInt8], seq: UInt64) throws -> Bool {
        // A record about no key (a retention record) is never listed, and LMDB refuses an empty key.
        guard let keyIndex = schema.keyIndex, !key.isEmpty else { return false }
        return try txn.delete(keyIndex, key, value: SeqKey.bytes(seq))
    }

    /// Rewrites the entries of `key` when few are left (retention trimmed its history): LMDB
    /// moves a key's entries to pages of their own once they pass a page, and never moves them
    /// back as they go, so a key trimmed from thousands of entries to one would keep a page in
    /// use for ever, and a size limit would pay for it (Format.md, "Retention").
    @available(*, noasync)
    func repack(_ txn: Transaction, key: [UInt8]) throws {
        guard let keyIndex = schema.keyIndex, !key.isEmpty else { return }
        var values: [[UInt8]] = []
        try txn.withCursor(keyIndex, from: .value(key: key, value: SeqKey.bytes(0), atMost: false)) { entries in
            while values.count <= Self.repackedEntries, let row = try entries.next() { values.append(Array(row.value)) }
        }
        guard !values.isEmpty, values.count <= Self.repackedEntries else { return }
        try txn.delete(keyIndex, key)
        for value in values { try txn.put(keyIndex, key, value) }
    }

    /// A key with at most this many entries fits inside its node: rewritten, it needs no page of its own.
    static let repackedEntries = 64

    /// Compares the index with the log: every whole record must be listed under its key
    /// (`missing` hears of each that is not), and no entry may name a whole record of another
    /// key, a seq the log cannot hold, or be no seq at all (`extra` hears of each, after the walk
    /// over the log). Damaged records are `verify`'s to name, not the index's. Reads only, so a
    /// healthy index costs no dirty page (a write transaction holds every page it dirties in memory).
    @available(*, noasync)
    func compare(_ txn: Transaction, missing: (UInt64, [UInt8]) throws -> Void,
                         extra: (_ key: [UInt8], _ value: [UInt8]) throws -> Void) throws {
        guard let keyIndex = schema.keyIndex else { return }
        try txn.withCursor(keyIndex) { index in
            try txn.forEachRow(schema.events) { row in
                // A record about no key (the policy's) is not listed.
                guard let seq = SeqKey.decode(row.key),
                      let header = try? EventCodec.decodeHeader(row.value, seq: seq, verifyChecksum: false), header.kind.isAboutAKey
                else { return }
                let key = EventCodec.keyBytes(header, in: row.value)
                let listed = try index.seek(key: Array(key), valueAtLeast: SeqKey.bytes(seq))
                guard listed.map({ !$0.value.elementsEqual(SeqKey.bytes(seq)) }) ?? true else { return }
                // A record that fails its checksum may have had its key bytes damaged: the
                // index rightly lists it under the key it was appended with.
                guard EventCodec.passesChecksum(row.value, seq: seq) else { return }
                try missing(seq, Array(key))
            }
        }
        // An entry whose record is unreadable, or missing where the log must have one (after the
        // compaction base, up to the last seq), is left alone: reads pass over it, and `verify`
        // names the record itself (a corrupt record, a gap), not the entry too. An entry for a
        // seq the log cannot hold (0, past the last seq, or compacted away) is wrong.
        let last = (try? counters.lastSeq(txn)) ?? MetaCounters.maxSeq
        let base = (try? counters.baseSeq(txn)) ?? 0
        var wrong: [([UInt8], [UInt8])] = []
        try txn.forEachRow(keyIndex) { row in
            guard let seq = SeqKey.decode(row.value) else {
                wrong.append((Array(row.key), Array(row.value)))
                return
            }
            guard let record = try txn.get(schema.events, SeqKey.bytes(seq)) else {
                if seq == 0 || seq > last || seq <= base { wrong.append((Array(row.key), Array(row.value))) }
                return
            }
            guard let header = try? EventCodec.decodeHeader(record, seq: seq, verifyChecksum: false) else { return }
            if !EventCodec.keyBytes(header, in: record).elementsEqual(row.key) && EventCodec.passesChecksum(record, seq: seq) {
                wrong.append((Array(row.key), Array(row.value)))
            }
        }
        for (key, value) in wrong { try extra(key, value) }
    }

    /// Whether the index lists exactly the records a fold applied (`folded`, the records after
    /// `base`) and the records kept at or before `base`, by digest: one sequential walk of the
    /// index, no lookup per record. False means "compare record by record" (``compare``),
    /// which tells damage from what the fold passed over.
    @available(*, noasync)
    func matches(_ txn: Transaction, folded: RecordDigest, base: UInt64) throws -> Bool {
        guard let keyIndex = schema.keyIndex else { return true }
        var digest = RecordDigest()
        var early = Set<[UInt8]>()
        var malformed = false
        var key: [UInt8] = []
        var hash: UInt64 = 0
        try txn.forEachRow(keyIndex) { row in
            if !row.key.elementsEqual(key) {
                key = Array(row.key)
                hash = StateFold.keyHash(row.key)
            }
            guard let seq = SeqKey.decode(row.value) else { malformed = true; return }
            if seq > base { digest.add(keyHash: hash, seq: seq) } else { early.insert(key + SeqKey.bytes(seq)) }
        }
        guard !malformed, digest == folded else { return false }
        // At or before the base only the records compaction kept are left: few, checked one by one.
        var kept = Set<[UInt8]>()
        for seq in try state.seqs(txn, in: schema.events, below: base + 1) {
            guard let record = try txn.get(schema.events, SeqKey.bytes(seq)),
                  let header = try? EventCodec.decodeHeader(record, seq: seq, verifyChecksum: false)
            else { return false }
            // Compaction keeps the record of the policy in effect, which, about no key, the index never lists.
            if !header.kind.isAboutAKey { continue }
            kept.insert(Array(EventCodec.keyBytes(header, in: record)) + SeqKey.bytes(seq))
        }
        return kept == early
    }

    /// Makes the index list exactly what the log holds. Returns the number of entries added and removed.
    @available(*, noasync)
    func repair(_ txn: Transaction) throws -> Int {
        guard let keyIndex = schema.keyIndex else { return 0 }
        var changed = 0
        try compare(txn, missing: { seq, key in
            try txn.put(keyIndex, key, SeqKey.bytes(seq))
            changed += 1
        }, extra: { key, value in
            try txn.delete(keyIndex, key, value: value)
            changed += 1
        })
        return changed
    }

    // MARK: one key as of a seq

    /// The key's live entry right after `seq`: its entry in the compaction base checkpoint, folded
    /// forward with the key's own records up to `seq`. With the index this reads the key's
    /// records only; without it, the whole state as of `seq`.
    @available(*, noasync)
    func foldedEntry(_ txn: Transaction, key: [UInt8], asOf seq: UInt64) throws -> LogState.Entry? {
        guard let keyIndex = schema.keyIndex, !key.isEmpty else { return try state.foldedState(txn, asOf: seq).entry(forKey: key) }
        let base = try counters.baseSeq(txn)
        guard seq >= base else { throw CacheLogError.historyCompacted(firstAvailable: base) }
        var folded = StateFold()
        if base > 0 {
            guard let raw = try txn.get(schema.checkpoints, SeqKey.bytes(base)) else {
                throw CacheLogError.corruptCheckpoint(seq: base, detail: "the compaction base checkpoint is missing")
            }
            if let entry = try CheckpointCodec.entry(forKey: key, in: raw, seq: base) {
                key.withUnsafeBytes { folded.set(entry, keyBytes: $0) }
            }
        }
        try txn.withCursor(keyIndex, from: .value(key: key, value: SeqKey.bytes(base + 1), atMost: false)) { seqs in
            while let row = try seqs.next(), let at = SeqKey.decode(row.value), at <= seq {
                // As the fold of the whole log does: a record whose framing fails is passed over.
                guard let record = try txn.get(schema.events, SeqKey.bytes(at)),
                      let header = try? EventCodec.decodeHeader(record, seq: at, verifyChecksum: false)
                else { continue }
                try? folded.apply(header, record: record, seq: at)
            }
        }
        return folded.entry(forKey: key)
    }

    /// Lists every record whose framing reads in an index that is empty (a database from before
    /// the index): no lookup per record and no checksum, as there is nothing to compare with.
    /// Returns nil when the index is not empty (another process's appends got there first).
    @available(*, noasync)
    func fillEmpty(_ txn: Transaction) throws -> Int? {
        guard let keyIndex = schema.keyIndex, try txn.entryCount(keyIndex) == 0 else { return nil }
        var added = 0
        try txn.forEachRow(schema.events) { row in
            guard let seq = SeqKey.decode(row.key),
                  let header = try? EventCodec.decodeHeader(row.value, seq: seq, verifyChecksum: false), header.kind.isAboutAKey
            else { return }
            try txn.put(keyIndex, Array(EventCodec.keyBytes(header, in: row.value)), SeqKey.bytes(seq), options: .appendDuplicate)
            added += 1
        }
        return added
    }
}
