#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension EventLog {
    /// Removes the history before `position` (a seq, or the first event recorded at or after a
    /// date), keeping every record the live state references, so `retrieve` keeps working. State
    /// as of any seq from the cut on stays available; earlier points report
    /// ``CacheLogError/historyCompacted(firstAvailable:)``.
    @discardableResult
    public func compact(before position: LogPosition) async throws -> CompactionReport {
        let tables = self.tables, environment = self.environment
        return try await writer.exclusive {
            try environment.write { txn in
                let last = try tables.lastSeq(txn)
                let base = try tables.baseSeq(txn)
                let cut = min(try tables.resolve(txn, position, upperBound: false), last + 1)
                guard cut > base + 1 else {
                    return CompactionReport(removed: 0, keptLive: 0, firstAvailable: base, bytesFreed: 0)
                }
                let newBase = cut - 1
                // The state right before the cut stands in for everything removed.
                var baseState = try tables.foldedState(txn, asOf: newBase)
                let baseRows = baseState.orderedRows()
                try tables.writeCheckpoint(txn, seq: newBase, rows: baseRows)

                // Keep the live puts, the records holding their payloads, and every record before
                // the cut that a put after it refers to for its (unchanged) payload. Keep the puts
                // of the state at the cut too: "as of" any point from the cut on reads each entry's
                // policy (max age, contract) from its put, and the audit tells its story from it.
                var live = Set(try tables.currentEntries(txn, onDamaged: self.logDamagedRows).flatMap { [$0.seq, $0.payloadSeq] })
                live.formUnion(baseRows.flatMap { [$0.entry.seq, $0.entry.payloadSeq] })
                // The policy in effect is read from its record, whatever its age.
                if case let policy = try tables.u64(txn, MetaKey.retentionSeq), policy > 0 { live.insert(policy) }
                try txn.forEachRow(tables.events, from: .atLeast(SeqKey.bytes(cut))) { row in
                    guard let seq = SeqKey.decode(row.key) else { return }
                    if let header = try? EventCodec.decodeHeader(row.value, seq: seq, verifyChecksum: false),
                       header.kind == .put, header.isReference,
                       let source = try? EventCodec.payloadSeq(header, in: row.value, seq: seq), source < cut {
                        live.insert(source)
                    }
                }
                let before = try tables.seqs(txn, in: tables.events, below: cut)
                let doomed = before.filter { !live.contains($0) }
                var freed = 0
                for seq in doomed {
                    guard let record = try txn.get(tables.events, SeqKey.bytes(seq)) else { continue }
                    freed += record.count
                    // The key index loses the record too (a record whose framing is damaged names
                    // no key: the walk below removes its entry).
                    if let header = try? EventCodec.decodeHeader(record, seq: seq, verifyChecksum: false),
                       try tables.unindex(txn, key: Array(EventCodec.keyBytes(header, in: record)), seq: seq) {
                        freed += SeqKey.size
                    }
                    try txn.delete(tables.events, SeqKey.bytes(seq))
                }
                // Entries of records that were already missing or unreadable name no key to
                // remove them by: one walk of the index drops what is left below the cut.
                freed += SeqKey.size * (try tables.unindexStragglers(txn, below: cut, keeping: live))
                for seq in try tables.seqs(txn, in: tables.checkpoints, below: newBase) {
                    try txn.delete(tables.checkpoints, SeqKey.bytes(seq))
                }
                try tables.setU64(txn, MetaKey.baseSeq, newBase)
                if try tables.u64(txn, MetaKey.checkpointSeq) < newBase {
                    try tables.setU64(txn, MetaKey.checkpointSeq, newBase)
                }
                return CompactionReport(
                    removed: doomed.count, keptLive: before.count - doomed.count, firstAvailable: newBase, bytesFreed: freed)
            }
        }
    }
}
