#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Rebuilds what the log's records determine (the state, the checkpoints, the counters, the key
/// index and `refs`) from the log alone, reading record headers only, and writes only what
/// differs from what is stored.
struct StateRebuild {
    let tables: LogTables

    /// Rebuilds inside the write transaction `txn`.
    @available(*, noasync)
    func rebuild(_ txn: Transaction) throws -> RebuildReport {
        var restored = try tables.counters.restoreCounters(txn)
        let base = try tables.counters.baseSeq(txn)
        let last = try tables.counters.lastSeq(txn)
        var fold = try tables.state.baseState(txn, base: base)
        // Checkpoints after the base are derived data too. The fold produces them at the
        // stored positions (appends place them at batch ends, which the log does not
        // record), or by the interval when there are none, and writes each only where the
        // stored one differs: a write transaction holds every page it dirties in memory.
        var stale = Set(try tables.state.seqs(txn, in: tables.schema.checkpoints, from: base + 1))

        let positions = stale
        var corrupt: [UInt64] = []
        var folded = 0
        var rewritten = 0
        var lastCheckpoint = base
        if last > base {
            try tables.state.fold(txn, into: &fold, range: (base + 1)...last,
                            onCorrupt: { seq, _ in corrupt.append(seq) }) { seq, current in
                folded += 1
                let gap = seq - lastCheckpoint
                let due = positions.isEmpty
                    ? gap >= UInt64(tables.checkpointInterval) && gap >= UInt64(current.count)
                    : positions.contains(seq)
                if due {
                    let encoded = try CheckpointCodec.encode(current.orderedRows())
                    if try txn.get(tables.schema.checkpoints, SeqKey.bytes(seq)).map({ !$0.elementsEqual(encoded) }) ?? true {
                        try txn.put(tables.schema.checkpoints, SeqKey.bytes(seq), encoded)
                        rewritten += 1
                    }
                    stale.remove(seq)
                    lastCheckpoint = seq
                }
            }
        }
        // Checkpoints before the base stand for nothing: compaction removed their history.
        stale.formUnion(try tables.state.seqs(txn, in: tables.schema.checkpoints, below: base))
        for seq in stale { try txn.delete(tables.schema.checkpoints, SeqKey.bytes(seq)) }
        let repaired = try rewriteState(txn, to: fold.orderedRows())
        // The fold's digest answers for a healthy index; only damage pays for the repair's
        // record-by-record comparison.
        let indexRepaired = try tables.keyIndex.entries.matches(txn, folded: fold.applied, base: base) ? 0 : try tables.keyIndex.entries.repair(txn)
        let refsRepaired = try tables.refs.entries.matches(txn, folded: fold.sources, base: base) ? 0 : try tables.refs.entries.repair(txn)
        if try tables.counters.value(txn, MetaKey.checkpointSeq) != lastCheckpoint {
            try tables.counters.set(txn, MetaKey.checkpointSeq, lastCheckpoint)
            restored.append("checkpointSeq")
        }
        return RebuildReport(
            eventsFolded: folded, liveKeys: fold.count, corruptSeqs: corrupt, repairedKeys: repaired,
            checkpointsRewritten: rewritten, checkpointsRemoved: stale.count, restoredCounters: restored,
            keyIndexEntriesRepaired: indexRepaired, refsEntriesRepaired: refsRepaired)
    }

    /// Makes the `state` table hold exactly `entries` (in key order), writing only the rows that
    /// differ: a write transaction holds every page it dirties in memory. Returns the keys changed.
    private func rewriteState(_ txn: Transaction, to rows: [(key: [UInt8], entry: LogState.Entry)]) throws -> [String] {
        var wanted: [[UInt8]: [UInt8]] = [:]
        for row in rows { wanted[row.key] = StateRowCodec.encode(row.entry) }
        var extra: [[UInt8]] = []
        var kept = Set<[UInt8]>()
        try txn.forEachRow(tables.schema.state) { row in
            let key = Array(row.key)
            if let value = wanted[key], row.value.elementsEqual(value) { kept.insert(key) } else if wanted[key] == nil { extra.append(key) }
        }
        var repaired = extra
        for key in extra { try txn.delete(tables.schema.state, key) }
        for (key, _) in rows {
            guard !kept.contains(key), let value = wanted[key] else { continue }
            try txn.put(tables.schema.state, key, value)
            repaired.append(key)
        }
        return repaired.sorted { $0.lexicographicallyPrecedes($1) }.map { String(decoding: $0, as: UTF8.self) }
    }
}
