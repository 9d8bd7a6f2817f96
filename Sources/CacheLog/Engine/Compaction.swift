#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Removes the history before a cut, keeping every record the live state, the state at the cut
/// and the retention policy need, with the records their payloads are built on.
struct Compaction {
    let tables: LogTables

    /// Compacts inside the write transaction `txn`; `onDamaged` hears the keys of damaged state rows.
    @available(*, noasync)
    func compact(_ txn: Transaction, before position: LogPosition, onDamaged: ([String]) -> Void) throws -> CompactionReport {
        let last = try tables.counters.lastSeq(txn)
        let base = try tables.counters.baseSeq(txn)
        let cut = min(try tables.positions.resolve(txn, position, upperBound: false), last + 1)
        guard cut > base + 1 else {
            return CompactionReport(removed: 0, keptLive: 0, firstAvailable: base, bytesFreed: 0)
        }
        let newBase = cut - 1
        // The state right before the cut stands in for everything removed.
        var baseState = try tables.state.foldedState(txn, asOf: newBase)
        let baseRows = baseState.orderedRows()
        try tables.writeCheckpoint(txn, seq: newBase, rows: baseRows)

        // Keep the live puts, the records holding their payloads, and every record before
        // the cut that a kept record needs for its payload (a reference's target, a delta's
        // base, and theirs in turn). Keep the puts of the state at the cut too: "as of" any
        // point from the cut on reads each entry's policy (max age, contract) from its put,
        // and the audit tells its story from it.
        var needed = Set(try tables.state.entries(txn, onDamaged: onDamaged).flatMap { [$0.seq, $0.payloadSeq] })
        needed.formUnion(baseRows.flatMap { [$0.entry.seq, $0.entry.payloadSeq] })
        // The policy in effect is read from its record, whatever its age.
        if case let policy = try tables.counters.value(txn, MetaKey.retentionSeq), policy > 0 { needed.insert(policy) }
        let before = try tables.state.seqs(txn, in: tables.schema.events, below: cut)
        // Newest first: whatever needs a record comes after it, so each record is judged
        // once every record that could need it has been. The `refs` table names what needs
        // a record, instead of a walk over every record after the cut; a kept record's own
        // source is read from it too, which keeps it even where `refs` lost the entry.
        var kept = Set<UInt64>()
        var doomed: [UInt64] = []
        for seq in before.reversed() {
            let neededByKept = try tables.refs.payloadDependents(txn, of: seq).contains { $0 >= cut || kept.contains($0) }
            guard needed.contains(seq) || neededByKept else {
                doomed.append(seq)
                continue
            }
            kept.insert(seq)
            if let record = try txn.get(tables.schema.events, SeqKey.bytes(seq)),
               let header = try? EventCodec.decodeHeader(record, seq: seq, verifyChecksum: false), header.kind == .put,
               let source = try? EventCodec.payloadSource(header, in: record, seq: seq) {
                needed.insert(source)
            }
        }
        var freed = 0
        var removed = 0
        for seq in doomed {
            // Its dependents were all doomed, and removed before it.
            guard let bytes = try tables.removeRecord(txn, seq) else { continue }
            freed += bytes
            removed += 1
        }
        // Entries of records that were already missing or unreadable name no key or
        // source to remove them by: one walk of each table drops what is left below the cut.
        for index in [tables.schema.keyIndex, tables.schema.refs] {
            freed += SeqKey.size * (try tables.dropEntriesOfMissingRecords(txn, in: index, below: cut, keeping: kept))
        }
        for seq in try tables.state.seqs(txn, in: tables.schema.checkpoints, below: newBase) {
            try txn.delete(tables.schema.checkpoints, SeqKey.bytes(seq))
        }
        try tables.counters.set(txn, MetaKey.baseSeq, newBase)
        if try tables.counters.value(txn, MetaKey.checkpointSeq) < newBase {
            try tables.counters.set(txn, MetaKey.checkpointSeq, newBase)
        }
        return CompactionReport(
            removed: removed, keptLive: before.count - removed, firstAvailable: newBase, bytesFreed: freed)
    }
}
