#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// Reads the log's records in seq order, for a query: once (``forEach(_:_:)``), or following the
/// log as it grows (``follow(_:pollInterval:)``), a chunk of records per read transaction.
struct EventReader: Sendable {
    let environment: Environment
    let tables: LogTables
    let logger: Logger
    /// What a follow to a date asks whether the date is past.
    let clock: @Sendable () -> Date

    /// Records read per read transaction: read transactions stay short (a long one pins pages
    /// that writers would reuse), and every value is decoded before its transaction ends.
    static let readChunk = 1024

    /// Calls `body` with every record the query selects, as ``EventLog/forEachEvent(_:_:)`` says.
    func forEach(_ query: EventQuery = EventQuery(), _ body: (LogItem) throws -> Bool) throws {
        let low = try firstSeq(of: query)
        // The reads after the first read what it held: a reader without the lock file copies
        // the database once for the whole scan, not once per chunk.
        let bounds: (UInt64, UInt64) = try environment.read(.held) { txn in
            let last = try tables.counters.lastSeq(txn)
            let high = min(try query.to.map { try tables.positions.resolve(txn, $0, upperBound: true) } ?? last, last)
            return (max(low, 1), high)
        }
        guard bounds.0 <= bounds.1 else { return }
        if query.key != nil && tables.schema.keyIndex == nil {
            logger.info("no key index yet (a database from before format 2, opened read-only): scanning the log; the first open for writing adds the index")
        }
        var cursor: UInt64? = query.reverse ? bounds.1 : bounds.0
        var remaining = query.limit ?? Int.max
        while let position = cursor, remaining > 0 {
            let (items, next) = try readChunk(query, from: position, bounds: bounds.0...bounds.1, max: min(remaining, Self.readChunk))
            for item in items {
                remaining -= 1
                guard try body(item) else { return }
            }
            cursor = next
        }
    }

    /// The records the query selects, then each new one, as ``EventLog/follow(_:pollInterval:)`` says.
    func follow(_ query: EventQuery = EventQuery(), pollInterval: Duration = .milliseconds(50)) -> AsyncThrowingStream<LogItem, any Error> {
        var forward = query
        forward.reverse = false
        forward.to = nil
        let (query, end, clock) = (forward, query.to, self.clock)
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var next = try firstSeq(of: query)
                    var remaining = query.limit ?? Int.max
                    // Whether the bounds are read from the newest commit. A reader without the
                    // lock file reads what it holds until it has delivered all of it (copying
                    // nothing while it catches up), then the newest commit, once per poll.
                    var newest = false
                    while !Task.isCancelled, remaining > 0 {
                        // Asked before the log is read: an event recorded by then is in the read.
                        let pastTheDate = if case .date(let date)? = end { clock() > date } else { false }
                        let (last, high) = try followBounds(to: end, newest ? .newest : .held)
                        let reached = switch end {
                        case .seq(let seq)?: last >= seq
                        case .date?: high < last || pastTheDate
                        case nil: false
                        }
                        if next > high {
                            if !newest {
                                newest = true
                                continue
                            }
                            if reached { break }
                            try await Task.sleep(for: pollInterval)
                            continue
                        }
                        newest = false
                        let (items, after) = try readChunk(query, from: max(next, 1), bounds: max(next, 1)...high, max: min(remaining, Self.readChunk))
                        for item in items where remaining > 0 {
                            continuation.yield(item)
                            remaining -= 1
                        }
                        next = after ?? high + 1
                    }
                    continuation.finish()
                } catch is CancellationError {
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The last seq in the log, and the last one a follow that ends at `end` delivers now.
    private func followBounds(to end: LogPosition?, _ recency: Environment.Recency) throws -> (last: UInt64, high: UInt64) {
        try environment.read(recency) { txn in
            let last = try tables.counters.lastSeq(txn)
            return (last, min(last, try end.map { try tables.positions.resolve(txn, $0, upperBound: true) } ?? last))
        }
    }

    /// The seq the query starts from.
    private func firstSeq(of query: EventQuery) throws -> UInt64 {
        try environment.read { txn in try query.from.map { try tables.positions.resolve(txn, $0, upperBound: false) } ?? 1 }
    }

    /// Reads up to `max` selected records starting at `from`, in one read transaction. Returns
    /// them and the seq to continue from (nil when the range is exhausted). It reads what the
    /// environment holds: the read that fixed `bounds` saw them all.
    private func readChunk(_ query: EventQuery, from: UInt64, bounds: ClosedRange<UInt64>, max: Int) throws -> ([LogItem], UInt64?) {
        try environment.read(.held) { txn in
            if let key = query.key, let keyIndex = tables.schema.keyIndex {
                return try readKeyChunk(txn, keyIndex, key: Array(key.utf8), query, from: from, bounds: bounds, max: max)
            }
            let start: Cursor.Start = query.reverse ? .atMost(SeqKey.bytes(from)) : .atLeast(SeqKey.bytes(from))
            return try txn.withCursor(tables.schema.events, from: start, reverse: query.reverse) { rows in
                var items: [LogItem] = []
                var visited = 0
                while let row = try rows.next(), let seq = SeqKey.decode(row.key), bounds.contains(seq) {
                    if items.count == max || visited == Self.readChunk * 8 {
                        return (items, seq)
                    }
                    visited += 1
                    if let item = select(txn, row.value, seq: seq, query: query) { items.append(item) }
                }
                return (items, nil)
            }
        }
    }

    /// ``readChunk(_:from:bounds:max:)`` for one key, through the key index: it visits the key's
    /// records only. A record is listed under the key it was appended with, so a damaged record
    /// of this key is still delivered (as corrupt), and damaged records of other keys are not.
    private func readKeyChunk(_ txn: Transaction, _ keyIndex: Table, key: [UInt8], _ query: EventQuery,
                              from: UInt64, bounds: ClosedRange<UInt64>, max: Int) throws -> ([LogItem], UInt64?) {
        // No record has such a key, and LMDB refuses to look one up.
        guard !key.isEmpty, key.count <= environment.maxKeySize else { return ([], nil) }
        let start = Cursor.Start.value(key: key, value: SeqKey.bytes(from), atMost: query.reverse)
        return try txn.withCursor(keyIndex, from: start, reverse: query.reverse) { seqs in
            var items: [LogItem] = []
            while let row = try seqs.next(), let seq = SeqKey.decode(row.value), bounds.contains(seq) {
                if items.count == max { return (items, seq) }
                // Compaction removes a record's entry with it; an entry without its record is
                // damage that `verify` names.
                guard let record = try txn.get(tables.schema.events, SeqKey.bytes(seq)) else { continue }
                if let item = select(txn, record, seq: seq, query: query) { items.append(item) }
            }
            return (items, nil)
        }
    }

    /// Decodes one record if the query selects it. The key and kind are compared on the raw
    /// header, so filtered-out records cost no allocation and no inflate.
    private func select(_ txn: Transaction, _ record: UnsafeRawBufferPointer, seq: UInt64, query: EventQuery) -> LogItem? {
        do {
            let header = try EventCodec.decodeHeader(record, seq: seq)
            if let kinds = query.kinds, !kinds.contains(header.kind) { return nil }
            if let key = query.key, !EventCodec.keyBytes(header, in: record).elementsEqual(key.utf8) { return nil }
            let payload = query.includePayload ? { try self.tables.payloads.payload(txn, header, in: record, seq: seq) } : nil
            return .event(try EventCodec.recordedEvent(header, in: record, seq: seq, payload: payload))
        } catch let error as CacheLogError {
            // A put whose payload is built on a damaged record (a delta's base, a reference's
            // target) cannot be read, and the damage is the other record's: it is named.
            if case .corruptRecord(let damaged, let detail) = error {
                return .corrupt(seq: seq, detail: damaged == seq ? detail : "built on seq \(damaged), which is corrupt: \(detail)")
            }
            return .corrupt(seq: seq, detail: error.description)
        } catch {
            return .corrupt(seq: seq, detail: "\(error)")
        }
    }
}
