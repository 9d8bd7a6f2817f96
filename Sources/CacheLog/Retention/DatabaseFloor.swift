#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the database needs whatever eviction does: the bytes in use less what evicting every
/// live cache would free. Each key keeps its history (at least the record it starts from, with
/// its entries in the key index and `trims`), the checkpoints stay, and LMDB keeps its own pages:
/// a size limit below this cannot be met by evicting, and retention keeps the live caches then.
struct DatabaseFloor {
    /// About the bytes left in use with every live cache evicted.
    var bytes: Int
    /// About the bytes the live caches hold: what evicting all of them would free.
    var liveBytes: Int
    /// The keys whose history holds them: the keys the key index lists.
    var keys: Int
    /// The live caches that may be evicted, the least recently saved first, with what evicting
    /// each frees.
    var candidates: [Eviction.Candidate]

    /// The floor of a database whose pages in use come to `bytesInUse`; `sparing` are keys that
    /// are not candidates (the saves the eviction makes room for), though their bytes count as
    /// freeable for the floor.
    @available(*, noasync)
    static func measure(_ tables: LogTables, _ txn: Transaction, bytesInUse: Int, sparing: Set<[UInt8]>) throws -> DatabaseFloor {
        var freeable = 0
        var candidates: [Eviction.Candidate] = []
        for (key, entry) in try tables.state.rows(txn).rows {
            guard let record = try txn.get(tables.schema.events, SeqKey.bytes(entry.seq)),
                  let header = try? EventCodec.decodeHeader(record, seq: entry.seq, verifyChecksum: false)
            else { continue }
            var held = RecordFootprint.bytes(record: record.count, key: key.count) + StateRowCodec.size + key.count
            if entry.payloadSeq != entry.seq, let source = try txn.get(tables.schema.events, SeqKey.bytes(entry.payloadSeq)) {
                held += RecordFootprint.bytes(record: source.count, key: key.count)
            }
            // The eviction's delete stays, as the record the key's history starts from.
            let frees = max(0, held - RecordFootprint.bytes(record: Eviction.deleteBytes(key: key.count), key: key.count))
            freeable += frees
            if !sparing.contains(key) { candidates.append(Eviction.Candidate(key: key, savedAt: header.recordedAt, frees: frees)) }
        }
        candidates.sort(by: Eviction.Candidate.goesFirst)
        return DatabaseFloor(bytes: max(0, bytesInUse - freeable), liveBytes: freeable, keys: try keyCount(tables, txn), candidates: candidates)
    }

    /// The keys the key index lists (the live ones where there is no index yet).
    @available(*, noasync)
    private static func keyCount(_ tables: LogTables, _ txn: Transaction) throws -> Int {
        guard let keyIndex = tables.schema.keyIndex else { return try txn.entryCount(tables.schema.state) }
        var count = 0
        var previous: [UInt8]?
        try txn.forEachRow(keyIndex) { row in
            guard previous.map({ !$0.elementsEqual(row.key) }) ?? true else { return }
            previous = Array(row.key)
            count += 1
        }
        return count
    }
}

/// About what a record takes in the database: its bytes and LMDB's node overhead, or whole pages
/// for one past a quarter of a page (LMDB moves it to pages of its own), and its key index entry.
enum RecordFootprint {
    static func bytes(record: Int, key: Int) -> Int {
        let stored = record > 2_000 ? (record + 16 + 4_095) / 4_096 * 4_096 : record + 24
        return stored + key + 24
    }
}
