#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads a key's live value: its entry, then the payload of the put it names, answered from the
/// log where the state row names a record that is not that put.
struct LiveValueReader {
    let tables: LogTables
    /// The payload each key last had here: a delta's base, one read fewer.
    let recentPayloads: RecentPayloads

    /// The live value of `key`, leaving out the payload when it is the record at `known`;
    /// `onDamaged` hears the key when its row is damaged.
    ///
    /// - Throws: ``CacheLogError/corruptStateRow(key:)`` when the row names a cache the log does
    ///   not hold, and ``CacheLogError/corruptRecord(seq:detail:)`` when the live record fails its
    ///   checks.
    func value(_ txn: Transaction, key: [UInt8], unlessPayloadIs known: UInt64?, onDamaged: ([String]) -> Void) throws -> StoredValue? {
        guard let entry = try tables.state.entry(txn, key: key, onDamaged: onDamaged) else { return nil }
        if let value = try storedValue(txn, entry, key: key, unlessPayloadIs: known) { return value }
        let name = String(decoding: key, as: UTF8.self)
        onDamaged([name])
        // The row names a cache the log does not hold: it cannot be read back, which
        // validation answers with a delete that also removes the row.
        guard let folded = try tables.state.entry(txn, key: key, .log) else { throw CacheLogError.corruptStateRow(key: name) }
        guard folded != entry, let value = try storedValue(txn, folded, key: key, unlessPayloadIs: known) else {
            throw CacheLogError.corruptRecord(seq: entry.seq, detail: "the live record is not this key's put")
        }
        return value
    }

    /// The payload of the put that `entry` names, or nil when the record at its seq is not a put
    /// of this key. The record passed its checksum, so it is as it was written: then the
    /// state row that gave `entry` is what is damaged, and the log (the fold) knows better.
    private func storedValue(_ txn: Transaction, _ entry: LogState.Entry, key: [UInt8], unlessPayloadIs known: UInt64?) throws -> StoredValue? {
        guard let record = try txn.get(tables.schema.events, SeqKey.bytes(entry.seq)) else {
            throw CacheLogError.corruptRecord(seq: entry.seq, detail: "the live record is missing")
        }
        let header = try EventCodec.decodeHeader(record, seq: entry.seq)
        guard header.kind == .put, EventCodec.keyBytes(header, in: record).elementsEqual(key) else { return nil }
        let payloadSeq = try EventCodec.payloadSeq(header, in: record, seq: entry.seq)
        let omitted = payloadSeq == known
        let payload = omitted ? Data() : try tables.payloads.payload(txn, header, in: record, seq: entry.seq, known: recentPayloads.version(of: key))
        return StoredValue(
            payload: payload, timestamp: Date(stamp: header.timestamp), seq: entry.seq,
            maxAge: header.recordedMaxAge, metadata: try EventCodec.metadata(header, in: record, seq: entry.seq),
            recordedAt: Date(stamp: header.recordedAt), payloadSeq: payloadSeq, isPayloadOmitted: omitted)
    }
}
