#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Counts the log's records and their sizes by kind and key, reading every record's header and
/// no payload.
struct LogStatsScan {
    let environment: Environment
    let tables: LogTables

    /// Scans every record header and reports counts and sizes.
    func stats() throws -> LogStats {
        var stats = LogStats()
        var next: UInt64 = 1
        var done = false
        var recency = Environment.Recency.newest
        while !done {
            // Chunked, so that the scan of a large log holds no read transaction for long. The
            // chunks after the first read what it held (a reader without the lock file copies
            // the database once).
            try environment.read(recency) { txn in
                stats.lastSeq = try tables.counters.lastSeq(txn)
                stats.liveKeys = try txn.entryCount(tables.schema.state)
                try txn.withCursor(tables.schema.events, from: .atLeast(SeqKey.bytes(next))) { rows in
                    var visited = 0
                    while let current = try rows.next(), let seq = SeqKey.decode(current.key) {
                        if visited == EventReader.readChunk * 16 { next = seq; return }
                        visited += 1
                        if stats.firstSeq == nil { stats.firstSeq = seq }
                        stats.storedBytes += current.value.count
                        if let header = try? EventCodec.decodeHeader(current.value, seq: seq) {
                            stats.events.add(header.kind)
                            if header.kind.isAboutAKey {
                                stats.byKey[Array(EventCodec.keyBytes(header, in: current.value)), default: .init()].add(header.kind)
                            }
                            stats.payloadBytes += header.payloadLength
                            if header.kind == .put { stats.storedPayloadBytes += header.body.count }
                            let at = Date(stamp: header.recordedAt)
                            if stats.firstRecordedAt == nil { stats.firstRecordedAt = at }
                            stats.lastRecordedAt = at
                        } else {
                            stats.corruptRecords += 1
                        }
                    }
                    done = true
                }
            }
            recency = .held
        }
        stats.mapSize = environment.mapSize
        stats.mapUsed = environment.mapUsed
        return stats
    }
}
