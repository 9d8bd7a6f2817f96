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
    /// The rows, as the log's records name them: compared, repaired and filled by ``SeqIndex``.
    var entries: SeqIndex {
        SeqIndex(table: schema.refs, listing: Self.listing, schema: schema, counters: counters, state: state)
    }

    /// A put that names a source (a reference, a delta) is listed under the source's seq, an
    /// earlier one.
    static let listing = SeqIndex.Listing(
        key: { header, record, seq in
            guard header.kind == .put, let source = (try? EventCodec.payloadSource(header, in: record, seq: seq)) ?? nil else { return nil }
            return SeqKey.bytes(source)
        },
        hash: { SeqKey.decode($0).map(StateFold.sourceHash) },
        mayList: { key, seq in SeqKey.decode(key).map { $0 < seq } ?? false },
        fillOptions: [])

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

}
