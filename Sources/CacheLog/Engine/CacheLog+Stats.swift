import Foundation

/// Counts and sizes of a log, as ``CacheLog/stats()`` reports them.
public struct LogStats: Sendable, Equatable {
    public struct Counts: Sendable, Equatable {
        public var put = 0, delete = 0, expire = 0
        public var total: Int { put + delete + expire }

        public init() {}

        mutating func add(_ kind: EventKind) {
            switch kind {
            case .put: put += 1
            case .delete: delete += 1
            case .expire: expire += 1
            }
        }
    }

    public var events = Counts()
    /// Counts per key, keyed by the key's UTF-8 bytes: keys are compared as LMDB compares them,
    /// so two keys that differ only in Unicode normalization (which Swift's `String` equality
    /// would merge) are counted apart. `String(decoding: bytes, as: UTF8.self)` gives the key.
    public var byKey: [[UInt8]: Counts] = [:]
    public var corruptRecords = 0
    /// Sum of payload sizes before compression.
    public var payloadBytes = 0
    /// Sum of stored record sizes (headers, keys, compressed bodies, checksums).
    public var storedBytes = 0
    /// Compressed bodies of puts only, to compare with `payloadBytes`.
    public var storedPayloadBytes = 0
    public var liveKeys = 0
    public var firstSeq: UInt64?
    public var lastSeq: UInt64 = 0
    public var firstRecordedAt: Date?
    public var lastRecordedAt: Date?
    public var mapSize = 0
    public var mapUsed = 0

    /// Payload bytes per stored payload byte (higher is better); nil without payloads.
    public var compressionRatio: Double? {
        storedPayloadBytes > 0 ? Double(payloadBytes) / Double(storedPayloadBytes) : nil
    }
}

extension CacheLog {
    /// Scans every record header (no payload is inflated) and reports counts and sizes.
    public func stats() throws -> LogStats {
        var stats = LogStats()
        var next: UInt64 = 1
        var done = false
        while !done {
            // Chunked, so that the scan of a large log holds no read transaction for long.
            try environment.read { txn in
                stats.lastSeq = try tables.lastSeq(txn)
                stats.liveKeys = try txn.entryCount(tables.state)
                try txn.withCursor(tables.events, from: .atLeast(SeqKey.bytes(next))) { rows in
                    var visited = 0
                    while let current = try rows.next(), let seq = SeqKey.decode(current.key) {
                        if visited == Self.readChunk * 16 { next = seq; return }
                        visited += 1
                        if stats.firstSeq == nil { stats.firstSeq = seq }
                        stats.storedBytes += current.value.count
                        if let header = try? EventCodec.decodeHeader(current.value, seq: seq) {
                            stats.events.add(header.kind)
                            stats.byKey[Array(EventCodec.keyBytes(header, in: current.value)), default: .init()].add(header.kind)
                            stats.payloadBytes += header.payloadLength
                            if header.kind == .put { stats.storedPayloadBytes += header.body.count }
                            let at = Date(storedSeconds: header.recordedAt)
                            if stats.firstRecordedAt == nil { stats.firstRecordedAt = at }
                            stats.lastRecordedAt = at
                        } else {
                            stats.corruptRecords += 1
                        }
                    }
                    done = true
                }
            }
        }
        stats.mapSize = environment.mapSize
        stats.mapUsed = environment.mapUsed
        return stats
    }
}
