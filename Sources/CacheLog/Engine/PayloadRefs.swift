#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `refs` table (``Tables/refs``): for each put whose payload bytes others need, the seqs
/// of those others (a reference to it, a delta against it). What lets compaction and retention
/// ask "does a kept record still need this one?" without reading every later record. Derived
/// from the log like the key index: appends keep it, `rebuildState()` repairs it, `verify()`
/// checks it, removing a record drops its entries.
///
/// Retention (and anything else that removes records one by one) uses two questions, in its
/// own write transaction: ``isPayloadSource(_:_:ignoring:)`` and ``LogTables/removeRecord(_:_:)``. Removing the
/// records of a set newest first frees each source once its dependents in the set are gone.
struct PayloadRefs {
    /// The table handles.
    let schema: Tables
    /// The counters in `meta`.
    let counters: MetaCounters
    /// The state, for the records kept at the compaction base.
    let state: StateReader

    /// Lists `dependent` as needing the payload bytes of `source`, in the append's transaction.
    @available(*, noasync)
    func addRef(_ txn: Transaction, source: UInt64, dependent: UInt64) throws {
        guard let refs = schema.refs else { return }
        try txn.put(refs, SeqKey.bytes(source), SeqKey.bytes(dependent))
    }

    /// The seqs listed as needing record `seq`'s payload bytes, in order (records since removed
    /// by damage included: ``isPayloadSource(_:_:)`` asks whether they are still stored).
    @available(*, noasync)
    func payloadDependents(_ txn: Transaction, of seq: UInt64) throws -> [UInt64] {
        guard let refs = schema.refs else { return [] }
        return try txn.withCursor(refs, from: .value(key: SeqKey.bytes(seq), value: SeqKey.bytes(0), atMost: false)) { rows in
            var dependents: [UInt64] = []
            while let row = try rows.next() {
                if let dependent = SeqKey.decode(row.value) { dependents.append(dependent) }
            }
            return dependents
        }
    }

    /// Whether a record still stored needs record `seq`'s payload bytes: a put that references
    /// it, or a delta against it (whose own dependents then need it too). While this is true,
    /// removing `seq` would make those puts unreadable. Dependents in `going` (to be removed
    /// with it) do not count.
    @available(*, noasync)
    func isPayloadSource(_ txn: Transaction, _ seq: UInt64, ignoring going: Set<UInt64> = []) throws -> Bool {
        for dependent in try payloadDependents(txn, of: seq) where !going.contains(dependent) {
            if try txn.get(schema.events, SeqKey.bytes(dependent)) != nil { return true }
        }
        return false
    }

    // MARK: checking and repairing

    /// Compares `refs` with the log: every put whose record names a source (a reference, a delta)
    /// must be listed under it (`missing` hears of each that is not), and no entry may be
    /// malformed, name a record that names another source, or a seq the log cannot hold (`extra`
    /// hears of each, after the walk over the log). Damaged records are `verify`'s to name, not
    /// the table's. Reads only, so a healthy table costs no dirty page.
    @available(*, noasync)
    func compare(_ txn: Transaction, missing: (_ dependent: UInt64, _ source: UInt64) throws -> Void,
                     extra: (_ key: [UInt8], _ value: [UInt8]) throws -> Void) throws {
        guard let refs = schema.refs else { return }
        try txn.withCursor(refs) { listed in
            try txn.forEachRow(schema.events) { row in
                guard let seq = SeqKey.decode(row.key),
                      let header = try? EventCodec.decodeHeader(row.value, seq: seq, verifyChecksum: false), header.kind == .put,
                      let source = try? EventCodec.payloadSource(header, in: row.value, seq: seq)
                else { return }
                let found = try listed.seek(key: SeqKey.bytes(source), valueAtLeast: SeqKey.bytes(seq))
                guard found.map({ !$0.value.elementsEqual(SeqKey.bytes(seq)) }) ?? true else { return }
                // A record that fails its checksum may have had its body damaged: the table
                // rightly lists it under the source it was appended with.
                guard EventCodec.passesChecksum(row.value, seq: seq) else { return }
                try missing(seq, source)
            }
        }
        let last = (try? counters.lastSeq(txn)) ?? MetaCounters.maxSeq
        let base = (try? counters.baseSeq(txn)) ?? 0
        var wrong: [([UInt8], [UInt8])] = []
        try txn.forEachRow(refs) { row in
            guard let source = SeqKey.decode(row.key), let dependent = SeqKey.decode(row.value), source < dependent else {
                wrong.append((Array(row.key), Array(row.value)))
                return
            }
            guard let record = try txn.get(schema.events, SeqKey.bytes(dependent)) else {
                // Missing where the log must hold it (after the base): a gap `verify` names.
                if dependent > last || dependent <= base { wrong.append((Array(row.key), Array(row.value))) }
                return
            }
            guard let header = try? EventCodec.decodeHeader(record, seq: dependent, verifyChecksum: false) else { return }
            let named = header.kind == .put ? try? EventCodec.payloadSource(header, in: record, seq: dependent) : nil
            if named != source && EventCodec.passesChecksum(record, seq: dependent) { wrong.append((Array(row.key), Array(row.value))) }
        }
        for (key, value) in wrong { try extra(key, value) }
    }

    /// Whether `refs` lists exactly the (source, dependent) pairs the fold found in the records
    /// after `base` (`folded`, ``StateFold/sources``) and those of the puts kept at or before it,
    /// by digest: one walk of the table, no lookup per record. False means "compare record by
    /// record" (``compare(_:missing:extra:)``), which tells damage from what the fold passed over.
    @available(*, noasync)
    func matches(_ txn: Transaction, folded: RecordDigest, base: UInt64) throws -> Bool {
        guard let refs = schema.refs else { return true }
        var digest = RecordDigest()
        var early = Set<[UInt8]>()
        var malformed = false
        try txn.forEachRow(refs) { row in
            guard let source = SeqKey.decode(row.key), let dependent = SeqKey.decode(row.value) else { malformed = true; return }
            if dependent > base { digest.add(keyHash: StateFold.sourceHash(source), seq: dependent) } else { early.insert(SeqKey.bytes(source) + SeqKey.bytes(dependent)) }
        }
        guard !malformed, digest == folded else { return false }
        var kept = Set<[UInt8]>()
        for seq in try state.seqs(txn, in: schema.events, below: base + 1) {
            guard let record = try txn.get(schema.events, SeqKey.bytes(seq)),
                  let header = try? EventCodec.decodeHeader(record, seq: seq, verifyChecksum: false)
            else { return false }
            guard header.kind == .put, let source = try? EventCodec.payloadSource(header, in: record, seq: seq) else { continue }
            kept.insert(SeqKey.bytes(source) + SeqKey.bytes(seq))
        }
        return kept == early
    }

    /// Makes `refs` list exactly what the log's records name. Returns the entries added and removed.
    @available(*, noasync)
    func repair(_ txn: Transaction) throws -> Int {
        guard let refs = schema.refs else { return 0 }
        var changed = 0
        try compare(txn, missing: { dependent, source in
            try txn.put(refs, SeqKey.bytes(source), SeqKey.bytes(dependent))
            changed += 1
        }, extra: { key, value in
            try txn.delete(refs, key, value: value)
            changed += 1
        })
        return changed
    }

    /// Fills an empty `refs` (a database from before it) from one walk of the log: every put
    /// whose framing reads and that names a source. Returns nil when the table is not empty
    /// (another process's upgrade got there first).
    @available(*, noasync)
    func fillEmpty(_ txn: Transaction) throws -> Int? {
        guard let refs = schema.refs, try txn.entryCount(refs) == 0 else { return nil }
        var added = 0
        try txn.forEachRow(schema.events) { row in
            guard let seq = SeqKey.decode(row.key),
                  let header = try? EventCodec.decodeHeader(row.value, seq: seq, verifyChecksum: false), header.kind == .put,
                  let source = try? EventCodec.payloadSource(header, in: row.value, seq: seq)
            else { return }
            try txn.put(refs, SeqKey.bytes(source), SeqKey.bytes(seq))
            added += 1
        }
        return added
    }
}
