#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A table derived from the log whose rows are (what a record is listed under, its seq): the
/// key index (a key's bytes) and `refs` (the seq of the record whose payload a put needs).
///
/// Appends keep it, `rebuildState()` repairs it, `verify()` checks it. The walks that compare
/// it with the log are the same for both; only ``Listing`` differs.
struct SeqIndex {
    /// What a record is listed under, and how the fold's digest hashes it.
    struct Listing: Sendable {
        /// The index key of the record `seq` with `header`, or nil when it is not listed.
        let key: @Sendable (_ header: EventCodec.Header, _ record: UnsafeRawBufferPointer, _ seq: UInt64) -> [UInt8]?
        /// The hash ``RecordDigest`` gives an index key, as the fold computes it; nil when no
        /// record could be listed under it.
        let hash: @Sendable (_ key: UnsafeRawBufferPointer) -> UInt64?
        /// Whether a row of index key `key` may list the record `seq` at all.
        let mayList: @Sendable (_ key: UnsafeRawBufferPointer, _ seq: UInt64) -> Bool
        /// How ``SeqIndex/fillEmpty(_:)`` puts its rows.
        let fillOptions: PutOptions
    }

    /// The table; nil in a database from before it.
    let table: Table?
    /// What a record is listed under.
    let listing: Listing
    /// The table handles.
    let schema: Tables
    /// The counters in `meta`.
    let counters: MetaCounters
    /// The state, for the records kept at the compaction base.
    let state: StateReader

    /// Compares the table with the log.
    ///
    /// Every whole record that is listed must be (`missing` hears of each that is not), and no
    /// row may name a whole record listed under something else, a seq the log cannot hold, or
    /// be no seq at all (`extra` hears of each, after the walk over the log). Damaged records
    /// are `verify`'s to name, not the table's. Reads only, so a healthy table costs no dirty
    /// page (a write transaction holds every page it dirties in memory).
    ///
    /// - Parameters:
    ///   - txn: The transaction to read in.
    ///   - missing: Hears of each record that is not listed: its seq and its index key.
    ///   - extra: Hears of each wrong row: its key and value.
    @available(*, noasync)
    func compare(_ txn: Transaction, missing: (_ seq: UInt64, _ key: [UInt8]) throws -> Void,
                 extra: (_ key: [UInt8], _ value: [UInt8]) throws -> Void) throws {
        guard let table else { return }
        try txn.withCursor(table) { rows in
            try txn.forEachRow(schema.events) { row in
                guard let seq = SeqKey.decode(row.key),
                      let header = try? EventCodec.decodeHeader(row.value, seq: seq, verifyChecksum: false),
                      let key = listing.key(header, row.value, seq)
                else { return }
                let listed = try rows.seek(key: key, valueAtLeast: SeqKey.bytes(seq))
                guard listed.map({ !$0.value.elementsEqual(SeqKey.bytes(seq)) }) ?? true else { return }
                // A record that fails its checksum may have had its key bytes damaged: the
                // table rightly lists it under what it was appended with.
                guard EventCodec.passesChecksum(row.value, seq: seq) else { return }
                try missing(seq, key)
            }
        }
        // A row whose record is unreadable, or missing where the log must have one (after the
        // compaction base, up to the last seq), is left alone: reads pass over it, and `verify`
        // names the record itself (a corrupt record, a gap), not the row too. A row for a seq
        // the log cannot hold (0, past the last seq, or compacted away) is wrong.
        let last = (try? counters.lastSeq(txn)) ?? MetaCounters.maxSeq
        let base = (try? counters.baseSeq(txn)) ?? 0
        var wrong: [([UInt8], [UInt8])] = []
        try txn.forEachRow(table) { row in
            guard let seq = SeqKey.decode(row.value), listing.mayList(row.key, seq) else {
                wrong.append((Array(row.key), Array(row.value)))
                return
            }
            guard let record = try txn.get(schema.events, SeqKey.bytes(seq)) else {
                if seq == 0 || seq > last || seq <= base { wrong.append((Array(row.key), Array(row.value))) }
                return
            }
            guard let header = try? EventCodec.decodeHeader(record, seq: seq, verifyChecksum: false) else { return }
            let named = listing.key(header, record, seq)
            if !(named.map { row.key.elementsEqual($0) } ?? false) && EventCodec.passesChecksum(record, seq: seq) {
                wrong.append((Array(row.key), Array(row.value)))
            }
        }
        for (key, value) in wrong { try extra(key, value) }
    }

    /// Whether the table lists exactly what the fold found in the records after `base`
    /// (`folded`) and what the records kept at or before `base` name, by digest.
    ///
    /// One sequential walk of the table, no lookup per record. False means "compare record by
    /// record" (``compare(_:missing:extra:)``), which tells damage from what the fold passed over.
    ///
    /// - Parameters:
    ///   - txn: The transaction to read in.
    ///   - folded: The digest the fold made of the records after `base`.
    ///   - base: The compaction base.
    @available(*, noasync)
    func matches(_ txn: Transaction, folded: RecordDigest, base: UInt64) throws -> Bool {
        guard let table else { return true }
        var digest = RecordDigest()
        var early = Set<[UInt8]>()
        var malformed = false
        var key: [UInt8] = []
        var hash: UInt64?
        try txn.forEachRow(table) { row in
            if hash == nil || !row.key.elementsEqual(key) {
                key = Array(row.key)
                hash = listing.hash(row.key)
            }
            guard let hash, let seq = SeqKey.decode(row.value) else { malformed = true; return }
            if seq > base { digest.add(keyHash: hash, seq: seq) } else { early.insert(key + SeqKey.bytes(seq)) }
        }
        guard !malformed, digest == folded else { return false }
        // At or before the base only the records compaction kept are left: few, checked one by one.
        var kept = Set<[UInt8]>()
        for seq in try state.seqs(txn, in: schema.events, below: base + 1) {
            guard let record = try txn.get(schema.events, SeqKey.bytes(seq)),
                  let header = try? EventCodec.decodeHeader(record, seq: seq, verifyChecksum: false)
            else { return false }
            if let listed = listing.key(header, record, seq) { kept.insert(listed + SeqKey.bytes(seq)) }
        }
        return kept == early
    }

    /// Makes the table list exactly what the log's records name.
    ///
    /// - Parameter txn: The write transaction.
    /// - Returns: The rows added and removed.
    @available(*, noasync)
    func repair(_ txn: Transaction) throws -> Int {
        guard let table else { return 0 }
        var changed = 0
        try compare(txn, missing: { seq, key in
            try txn.put(table, key, SeqKey.bytes(seq))
            changed += 1
        }, extra: { key, value in
            try txn.delete(table, key, value: value)
            changed += 1
        })
        return changed
    }

    /// Fills an empty table (a database from before it) from one walk of the log: every record
    /// whose framing reads and that is listed. No lookup per record and no checksum, as there is
    /// nothing to compare with.
    ///
    /// - Parameter txn: The write transaction.
    /// - Returns: The rows added, or nil when the table is not empty (another process got there first).
    @available(*, noasync)
    func fillEmpty(_ txn: Transaction) throws -> Int? {
        guard let table, try txn.entryCount(table) == 0 else { return nil }
        var added = 0
        try txn.forEachRow(schema.events) { row in
            guard let seq = SeqKey.decode(row.key),
                  let header = try? EventCodec.decodeHeader(row.value, seq: seq, verifyChecksum: false),
                  let key = listing.key(header, row.value, seq)
            else { return }
            try txn.put(table, key, SeqKey.bytes(seq), options: listing.fillOptions)
            added += 1
        }
        return added
    }
}
