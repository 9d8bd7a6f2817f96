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
    /// The rows, as the log's records list them: compared, repaired and filled by ``SeqIndex``.
    var entries: SeqIndex {
        SeqIndex(table: schema.keyIndex, listing: Self.listing, schema: schema, counters: counters, state: state)
    }

    /// A record about a key is listed under the key's bytes; the retention record, about none, is not.
    static let listing = SeqIndex.Listing(
        key: { header, record, _ in header.kind.isAboutAKey ? Array(EventCodec.keyBytes(header, in: record)) : nil },
        hash: { StateFold.keyHash($0) },
        mayList: { _, _ in true },
        fillOptions: .appendDuplicate)

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

}
