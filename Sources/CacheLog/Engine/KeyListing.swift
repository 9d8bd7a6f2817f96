#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Lists the keys the log holds records of, and tells how a key's last cache ended, through the
/// key index (a scan of the log in a database from before it).
struct KeyListing {
    let environment: Environment
    let tables: LogTables

    /// Every key with a record, in byte order, as ``EventLog/keys(withPrefix:)`` says.
    func keys(withPrefix prefix: String = "") throws -> [String] {
        let start = Array(prefix.utf8)
        // No key is longer than LMDB's limit, and LMDB refuses to look one up.
        guard start.count <= environment.maxKeySize else { return [] }
        guard let keyIndex = tables.schema.keyIndex else { return try scannedKeys(withPrefix: start) }
        var keys: [[UInt8]] = []
        var done = false
        var recency = Environment.Recency.newest
        while !done {
            // Chunked, so that a log of many keys holds no read transaction for long. The chunks
            // after the first read what it held (a reader without the lock file copies once).
            try environment.read(recency) { txn in
                try txn.withCursor(keyIndex) { rows in
                    // Each chunk starts again at the last key read, which it skips.
                    let resume = keys.last ?? start
                    var row = resume.isEmpty ? try rows.first() : try rows.seek(atLeast: resume)
                    if let last = keys.last, let current = row, current.key.elementsEqual(last) { row = try rows.nextKey() }
                    var visited = 0
                    while let current = row, current.key.starts(with: start) {
                        if visited == EventReader.readChunk { return }
                        keys.append(Array(current.key))
                        visited += 1
                        row = try rows.nextKey()
                    }
                    done = true
                }
            }
            recency = .held
        }
        return keys.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The removal that ended the last cache of the key `keyBytes` (not empty), as
    /// ``EventLog/ending(of:)`` says.
    func ending(of keyBytes: [UInt8]) throws -> KeyEnding? {
        guard keyBytes.count <= environment.maxKeySize, let keyIndex = tables.schema.keyIndex else { return nil }
        return try environment.read { txn in
            guard try txn.get(tables.schema.state, keyBytes) == nil,
                  let last = try txn.withCursor(keyIndex, from: .value(key: keyBytes, value: SeqKey.bytes(.max), atMost: true), reverse: true, {
                      try $0.next().flatMap { $0.key.elementsEqual(keyBytes) ? SeqKey.decode($0.value) : nil }
                  }),
                  let record = try txn.get(tables.schema.events, SeqKey.bytes(last)),
                  let header = try? EventCodec.decodeHeader(record, seq: last)
            else { return nil }
            let recordedAt = Date(stamp: header.recordedAt)
            switch header.kind {
            case .delete:
                guard let reason = header.reason else { return nil }
                let limit = (try? EventCodec.metadata(header, in: record, seq: last))?[Eviction.sizeLimitName].flatMap { Int($0) }
                return KeyEnding(seq: last, recordedAt: recordedAt, cause: .deleted(reason), sizeLimit: limit)
            case .expire:
                return KeyEnding(seq: last, recordedAt: recordedAt, cause: .expired(timestamp: Date(stamp: header.timestamp), maxAge: header.maxAge))
            case .put, .retention:
                return nil
            }
        }
    }

    private func scannedKeys(withPrefix prefix: [UInt8]) throws -> [String] {
        var seen = Set<[UInt8]>()
        try environment.read { txn in
            try txn.forEachRow(tables.schema.events) { row in
                guard let seq = SeqKey.decode(row.key), let header = try? EventCodec.decodeHeader(row.value, seq: seq) else { return }
                let key = EventCodec.keyBytes(header, in: row.value)
                if key.starts(with: prefix) { seen.insert(Array(key)) }
            }
        }
        return seen.sorted { $0.lexicographicallyPrecedes($1) }.map { String(decoding: $0, as: UTF8.self) }
    }
}
