#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Drops live caches for the size limit, the least recently saved first: each gets a `delete`
/// with reason ``Event/DeletionReason/evicted`` that records the limit that pressed (metadata
/// `size-limit`), so that a load, the audit and `replay` say why the cache was gone.
struct Eviction {
    let tables: LogTables

    /// A live cache that may go: its key's bytes, when its put was recorded (a stamp), and what
    /// evicting it frees.
    struct Candidate {
        var key: [UInt8]
        var savedAt: Double
        var frees: Int

        /// The eviction order: the least recently saved first; of two saved at once, the
        /// smaller key (an order every process computes the same).
        static func goesFirst(_ one: Candidate, _ other: Candidate) -> Bool {
            one.savedAt < other.savedAt || (one.savedAt == other.savedAt && one.key.lexicographicallyPrecedes(other.key))
        }
    }

    /// The bytes of an eviction's delete of a key of `key` bytes: a header, the key, the metadata
    /// that names the limit, the checksum.
    static func deleteBytes(key: Int) -> Int { EventCodec.headerSize + key + 40 + EventCodec.checksumSize }

    /// Evicts `candidates` in order until about `bytes` are freed, at `now`, under a size limit of
    /// `limit`. Returns how many it evicted: counted by the state rows that are gone, since a
    /// delete that left its row (a key whose bytes do not survive as a string) evicted nothing,
    /// and a pass must not evict it for ever.
    @available(*, noasync)
    func evict(_ txn: Transaction, _ candidates: ArraySlice<Candidate>, bytes: Int, limit: Int, now: Date) throws -> Int {
        var freed = 0
        var deletes: [EventCodec.Prepared] = []
        let metadata = try EventCodec.encodeMetadata([Self.sizeLimitName: String(limit)])
        for candidate in candidates where freed < bytes {
            var delete = try EventCodec.prepare(.delete(key: String(decoding: candidate.key, as: UTF8.self), reason: .evicted), maxKeySize: Int.max)
            delete.metadata = metadata
            deletes.append(delete)
            freed += candidate.frees
        }
        guard !deletes.isEmpty else { return 0 }
        _ = try tables.append(txn, batches: [(events: deletes, conditions: [])], now: now)
        var evicted = 0
        for candidate in candidates.prefix(deletes.count) where try txn.get(tables.schema.state, candidate.key) == nil { evicted += 1 }
        return evicted
    }

    /// The metadata name under which an eviction records the size limit that pressed, in bytes.
    static let sizeLimitName = "size-limit"
}
