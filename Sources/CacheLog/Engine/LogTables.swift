#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The operations on the tables inside one transaction. Every write here runs inside the
/// writer's transaction, so the append, the state and the counters commit together or not at all.
///
/// Callers reach the table handles through it (`tables.events`), as its own code does (`table.events`).
@dynamicMemberLookup
struct LogTables {
    let table: Tables
    /// Minimum number of events between checkpoints.
    let checkpointInterval: Int

    init(_ tables: Tables, checkpointInterval: Int) {
        table = tables
        self.checkpointInterval = checkpointInterval
    }

    subscript<Value>(dynamicMember keyPath: KeyPath<Tables, Value>) -> Value { table[keyPath: keyPath] }

    // MARK: meta

    func u64(_ txn: Transaction, _ key: [UInt8]) throws -> UInt64 {
        guard let raw = try txn.get(table.meta, key), raw.count == 8 else { return 0 }
        return UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))
    }

    func setU64(_ txn: Transaction, _ key: [UInt8], _ value: UInt64) throws {
        try txn.put(table.meta, key, SeqKey.bytes(value))
    }

    /// The last `recordedAt` appended, as a stamp; a value that is not a finite number is damage,
    /// and counts as none, so that it cannot stamp every later event.
    func lastRecordedAt(_ txn: Transaction) throws -> Double {
        guard let value = try storedLastRecordedAt(txn), value.isFinite else { return -.infinity }
        return value
    }

    /// The last `recordedAt` as `meta` holds it: nil when there is none, NaN when it does not decode.
    func storedLastRecordedAt(_ txn: Transaction) throws -> Double? {
        guard let raw = try txn.get(table.meta, MetaKey.lastRecordedAt) else { return nil }
        return MetaStamp.decode(raw) ?? .nan
    }

    /// Seqs past this are not a count of events but damage (a log would take a hundred
    /// thousand years to get there at a million events a second), and keeping every seq below it
    /// keeps the arithmetic on seqs (+1, ranges) far from overflowing.
    static let maxSeq: UInt64 = 1 << 62

    /// The last seq appended, from `meta`, refused when it is beyond any real log.
    func lastSeq(_ txn: Transaction) throws -> UInt64 {
        try boundedSeq(txn, MetaKey.lastSeq, "lastSeq")
    }

    /// The compaction base, from `meta` (0: nothing compacted).
    func baseSeq(_ txn: Transaction) throws -> UInt64 {
        let base = try boundedSeq(txn, MetaKey.baseSeq, "baseSeq")
        let last = try lastSeq(txn)
        guard base <= last else { throw CacheLogError.corruptMeta(detail: "baseSeq \(base) is after lastSeq \(last)") }
        return base
    }

    /// The seq of the last record in the log, if any.
    func lastRecordSeq(_ txn: Transaction) throws -> UInt64? {
        try txn.withCursor(table.events, from: .last) { rows in try rows.next().flatMap { SeqKey.decode($0.key) } }
    }

    /// Sets the counters in `meta` that contradict the log to what the log says: `lastSeq` to the
    /// last record's seq when it is below it or impossible, `lastRecordedAt` to the last
    /// record's time when it is not a number. Returns the names of the counters it set.
    func restoreCounters(_ txn: Transaction) throws -> [String] {
        var restored: [String] = []
        let inLog = try lastRecordSeq(txn) ?? 0
        guard inLog <= Self.maxSeq else { throw CacheLogError.corruptMeta(detail: "the last record's seq is \(inLog)") }
        let stored = try u64(txn, MetaKey.lastSeq)
        // Compaction may remove the last records, so a lastSeq above the last record is fine.
        if stored > Self.maxSeq || stored < inLog {
            try setU64(txn, MetaKey.lastSeq, inLog)
            restored.append("lastSeq")
        }
        if try storedLastRecordedAt(txn)?.isFinite == false {
            let time = try txn.get(table.events, SeqKey.bytes(inLog)).flatMap(EventCodec.recordedAt).flatMap { $0.isFinite ? $0 : nil } ?? 0
            try txn.put(table.meta, MetaKey.lastRecordedAt, MetaStamp.encode(time))
            restored.append("lastRecordedAt")
        }
        return restored
    }

    private func boundedSeq(_ txn: Transaction, _ key: [UInt8], _ name: String) throws -> UInt64 {
        let value = try u64(txn, key)
        guard value <= Self.maxSeq else { throw CacheLogError.corruptMeta(detail: "\(name) is \(value)") }
        return value
    }

    // MARK: append

    /// One batch for ``append(_:batches:now:)``: its events, and the conditions it is appended under.
    typealias Batch = (events: [EventCodec.Prepared], conditions: [AppendCondition])

    /// Appends the batches in order, each event with the next seq, and folds them into the
    /// state. Returns each batch's seq range, or the live entry that superseded it: a batch whose
    /// condition fails (judged after the batches before it) writes nothing and takes no seqs.
    /// Safe to run again after an abort (map growth): it starts from what the transaction reads.
    func append(_ txn: Transaction, batches: [Batch], now: Date) throws -> [Result<AppendedBatch, SupersededBatch>] {
        var seq = try lastSeq(txn)
        let lastBefore = seq
        // Recorded time never goes backward, so that "as of a date" can binary-search the log.
        let recordedAt = max(now.stamp, try lastRecordedAt(txn))
        // A checkpoint seq past the last seq is damage: the next checkpoint is due at once.
        var checkpointSeq = min(try u64(txn, MetaKey.checkpointSeq), seq)
        var ranges: [Result<AppendedBatch, SupersededBatch>] = []
        ranges.reserveCapacity(batches.count)
        // Payloads removed earlier in this transaction, so a save (delete + put) of an unchanged
        // feed still finds the version it replaces.
        var removed: [[UInt8]: UInt64] = [:]
        batches: for (batch, conditions) in batches {
            var leftOut: [[UInt8]] = []
            for condition in conditions {
                if condition.requiresLive {
                    // Judged here, with every commit before it seen: two removals of one key
                    // record one delete, not a second of nothing.
                    if liveEntryIfReadable(txn, key: condition.key) == nil { leftOut.append(condition.key) }
                    continue
                }
                guard let superseding = try supersedingEntry(txn, for: condition) else { continue }
                guard condition.wholeBatch else {
                    leftOut.append(condition.key)
                    continue
                }
                ranges.append(.failure(superseding))
                continue batches
            }
            let events = leftOut.isEmpty ? batch : batch.filter { event in !leftOut.contains { $0.elementsEqual(event.key) } }
            // EventLog sends a batch whose key-scoped conditions leave its own key's events in,
            // so this holds; were it not to, there would be no seqs to report.
            guard !events.isEmpty else {
                ranges.append(.failure(SupersededBatch(live: LogState.Entry(key: "", seq: 0, timestamp: .distantPast, bytes: 0))))
                continue
            }
            let first = seq + 1
            var puts: [StoredPut] = []
            for event in events {
                seq += 1
                var payloadSeq = seq
                var form = EventCodec.Form.whole
                var source: UInt64?
                if event.kind == .put {
                    if let earlier = try identicalPayload(txn, event, removed: removed) {
                        form = .reference(earlier)
                        payloadSeq = earlier
                        source = earlier
                    } else if let delta = event.delta, deltaBaseHolds(txn, event, delta) {
                        form = .delta
                        source = delta.base
                    }
                } else if event.kind == .delete || event.kind == .expire, let entry = liveEntryIfReadable(txn, key: event.key) {
                    removed[event.key] = entry.payloadSeq
                }
                // A put prepared as a delta has no whole body yet: made here, in the rare case that
                // its base is gone.
                var event = event
                if form == .whole { try event.compressBody() }
                let record = EventCodec.encode(event, recordedAt: recordedAt, as: form)
                if event.kind == .put {
                    let holdsPayload = source == nil || form == .delta
                    puts.append(StoredPut(key: event.key, seq: seq,
                                          checksum: holdsPayload ? record.withUnsafeBytes { EventCodec.storedChecksum($0) } : nil))
                }
                // Appended: a seq sorts after every existing key, so LMDB fills pages to the end
                // instead of splitting them.
                do {
                    try txn.put(table.events, SeqKey.bytes(seq), record, options: .append)
                } catch let error as CacheLogError where error.isKeyExists {
                    throw CacheLogError.corruptMeta(detail: "lastSeq is \(seq - 1), but the log holds later records")
                }
                if event.kind.isAboutAKey {
                    try applyToState(txn, event, seq: seq, payloadSeq: payloadSeq)
                    try index(txn, key: event.key, seq: seq)
                } else {
                    // The policy's record, about no key: `meta` names the newest, which every
                    // writer applies.
                    try setU64(txn, MetaKey.retentionSeq, seq)
                }
                if let source { try addRef(txn, source: source, dependent: seq) }
            }
            ranges.append(.success(AppendedBatch(range: first...seq, leftOut: leftOut, puts: puts)))
            if try checkpointDue(txn, seq: seq, last: checkpointSeq) {
                // Rows that do not decode are left out: a damaged row must not block every append.
                try writeCheckpoint(txn, seq: seq, rows: try storedRows(txn).rows)
                checkpointSeq = seq
            }
        }
        try setU64(txn, MetaKey.lastSeq, seq)
        // Only what was appended moves recorded time: a save refused for a newer cache, whose
        // clock may be far ahead, must not stamp the next writer's records with that clock.
        if seq > lastBefore { try txn.put(table.meta, MetaKey.lastRecordedAt, MetaStamp.encode(recordedAt)) }
        try setU64(txn, MetaKey.checkpointSeq, checkpointSeq)
        return ranges
    }

    /// The live entry of the condition's key when it is newer, by the log's order, than the fetch
    /// the condition's batch saves (see ``AppendCondition``). The `state` table holds this
    /// transaction's own appends, so a batch earlier in the same group counts. An entry whose put
    /// cannot be read counts as none, as it does for a plain append: a damaged row that names
    /// another record must not make a save wait for ever.
    private func supersedingEntry(_ txn: Transaction, for condition: AppendCondition) throws -> SupersededBatch? {
        if let removal = try explicitRemoval(txn, key: condition.key, after: condition.since) {
            return SupersededBatch(live: removal, removal: true)
        }
        guard let row = liveEntryIfReadable(txn, key: condition.key),
              let live = try checkedAgainstItsPut(row, key: condition.key, txn),
              live.supersedes(aFetchBeganAt: condition.since)
        else { return nil }
        return SupersededBatch(live: live)
    }

    /// An explicit delete of `key` committed after `position`, as an entry naming the delete (its
    /// seq, and its recorded time as the timestamp): someone removed the key after the fetch
    /// began, and its answer must not bring back what they removed. Found through the key index;
    /// `nil` without one (a database no writer has opened since before it existed).
    private func explicitRemoval(_ txn: Transaction, key: [UInt8], after position: UInt64) throws -> LogState.Entry? {
        guard let keyIndex = table.keyIndex, !key.isEmpty else { return nil }
        return try txn.withCursor(keyIndex, from: .value(key: key, value: SeqKey.bytes(position + 1), atMost: false)) { seqs in
            while let row = try seqs.next(), let at = SeqKey.decode(row.value) {
                guard at > position, let record = try txn.get(table.events, SeqKey.bytes(at)),
                      let header = try? EventCodec.decodeHeader(record, seq: at, verifyChecksum: false),
                      header.kind == .delete, header.reason == .explicit
                else { continue }
                return LogState.Entry(key: String(decoding: key, as: UTF8.self), seq: at, timestamp: Date(stamp: header.recordedAt), bytes: 0)
            }
            return nil
        }
    }

    /// The seq of an earlier put of the same key whose payload is byte-identical to `event`'s:
    /// the key's live version, or the one this transaction just removed. The compressed bodies are
    /// compared: the same bytes compressed the same way give the same stream, and a mismatch only
    /// costs a second copy, never a wrong payload. A candidate stored as a delta has no such body:
    /// it counts when it is the record the appending task compared payloads with (its seq, and
    /// the CRC-32 its record ends with: records are never rewritten).
    ///
    /// The candidate must pass its checksum: a reference to a damaged record would make every
    /// later save of the same feed unreadable too, and the cache could never heal. A damaged
    /// candidate gets no reference, so this put stores a fresh copy. The checksum is checked last,
    /// once the bodies are equal: most saves bring a changed feed, and a checksum of the record
    /// they replace would be work for nothing.
    private func identicalPayload(_ txn: Transaction, _ event: EventCodec.Prepared, removed: [[UInt8]: UInt64]) throws -> UInt64? {
        guard let candidate = liveEntryIfReadable(txn, key: event.key)?.payloadSeq ?? removed[event.key],
              let record = try txn.get(table.events, SeqKey.bytes(candidate)),
              let header = try? EventCodec.decodeHeader(record, seq: candidate, verifyChecksum: false),
              header.kind == .put, !header.isReference, header.payloadLength == Int(event.payloadLength),
              event.identical == EventCodec.IdenticalPayload(seq: candidate, checksum: EventCodec.storedChecksum(record) ?? 0)
                || !header.isDelta && !event.body.isEmpty && event.body.withUnsafeBytes({ EventCodec.sameBytes(UnsafeRawBufferPointer(rebasing: record[header.body]), $0) }),
              Self.passesChecksum(record, seq: candidate)
        else { return nil }
        return candidate
    }

    /// Whether the base a delta was made against is still the record it was made from: stored,
    /// whole as written (its checksum passes, and it ends with the CRC-32 the appending task
    /// read), a put of this key of the length the delta was made from, one short of the delta's
    /// depth, which is within the bound. Records are never rewritten, so the base then holds the
    /// payload the delta was made against, whatever was appended or removed since: the delta is
    /// correct without trusting what the appending task read. Otherwise the put is stored whole.
    private func deltaBaseHolds(_ txn: Transaction, _ event: EventCodec.Prepared, _ delta: EventCodec.PreparedDelta) -> Bool {
        guard delta.depth >= 1, delta.depth <= EventCodec.maxDeltaDepth,
              let record = try? txn.get(table.events, SeqKey.bytes(delta.base)),
              EventCodec.storedChecksum(record) == delta.baseChecksum,
              let header = try? EventCodec.decodeHeader(record, seq: delta.base),
              header.kind == .put, !header.isReference, header.payloadLength == delta.baseLength,
              EventCodec.keyBytes(header, in: record).elementsEqual(event.key),
              (try? EventCodec.depth(header, in: record, seq: delta.base)) == delta.depth - 1
        else { return false }
        return true
    }

    private func applyToState(_ txn: Transaction, _ event: EventCodec.Prepared, seq: UInt64, payloadSeq: UInt64) throws {
        switch event.kind {
        case .put:
            let entry = LogState.Entry(
                key: "", seq: seq, timestamp: Date(stamp: event.timestamp), bytes: Int(event.payloadLength),
                payloadSeq: payloadSeq)
            try txn.put(table.state, event.key, StateRowCodec.encode(entry))
        case .delete:
            try txn.delete(table.state, event.key)
        case .expire:
            // Same rule as `StateFold.apply`: only the version cached at `timestamp` expires,
            // stamps compared bit for bit. A damaged row is judged by the log's entry for the
            // key, so the expire removes it too.
            guard let raw = try txn.get(table.state, event.key) else { return }
            let live: UInt64? = StateRowCodec.decode(key: "", raw).map { $0.timestamp.stamp.bitPattern }
                ?? (try? foldedState(txn).timestampBits(forKey: event.key))
            guard live == event.timestamp.bitPattern else { return }
            try txn.delete(table.state, event.key)
        case .retention:
            break
        }
    }

    /// A checkpoint costs a pass over every live key, so checkpoints come no closer together than
    /// the number of live keys: the cost per event stays constant however many keys there are.
    private func checkpointDue(_ txn: Transaction, seq: UInt64, last: UInt64) throws -> Bool {
        let gap = seq - last
        guard gap >= UInt64(checkpointInterval) else { return false }
        return gap >= UInt64(try txn.entryCount(table.state))
    }

    func writeCheckpoint(_ txn: Transaction, seq: UInt64, rows: [StateFold.Row]) throws {
        try txn.put(table.checkpoints, SeqKey.bytes(seq), try CheckpointCodec.encode(rows))
    }

    // MARK: payloads

    /// The payload of the put `record` at `seq`, following its reference to the earlier put that
    /// holds the bytes when it has one, and that put's delta chain when it is a delta. A broken
    /// reference or base is corruption of the record that names it; bad bytes in the target are
    /// reported at the target's seq.
    ///
    /// `known`, a version of the key remembered from a save (``RecentPayloads``), gives the bytes
    /// when the record that holds them is the one it was remembered from:
    /// every record on the way is still read and checked as without it (the put, the record it
    /// references, each base of its chain), and only the inflating is spared, so damage is
    /// reported as it always was.
    func payload(_ txn: Transaction, _ header: EventCodec.Header, in record: UnsafeRawBufferPointer, seq: UInt64,
                 known: RememberedPayload? = nil) throws -> Data {
        let (sourceHeader, source, sourceSeq) = try payloadRecord(txn, header, in: record, seq: seq)
        return try rebuilt(txn, sourceHeader, in: source, seq: sourceSeq, known: known).payload
    }

    /// The payload of a put that is not a reference, and the header of the whole put that starts
    /// its chain: its body inflated, or, for a delta, rebuilt through its chain: each base read
    /// (its checksum checked) down to the whole put that starts the chain, then each delta's
    /// instructions applied on the way back up. Each base is one shallower than the delta on it
    /// (``deltaBase(_:_:of:in:seq:)``), so a chain is at most the delta's depth plus one records,
    /// whatever its bytes say: the engine writes at most ``EventCodec/maxDeltaDepth`` + 1, and
    /// damage cannot make it more than 256. With `known` (see ``payload(_:_:in:seq:known:)``), the
    /// chain is walked and checked, and the remembered bytes stand for what it would rebuild.
    private func rebuilt(_ txn: Transaction, _ header: EventCodec.Header, in record: UnsafeRawBufferPointer, seq: UInt64,
                         known: RememberedPayload? = nil) throws -> (payload: Data, whole: EventCodec.Header) {
        let isKnown = known?.isPayload(ofPutAt: seq, record: record, length: header.payloadLength) ?? false
        guard header.isDelta else {
            if isKnown, let known { return (known.payload, header) }
            return (try EventCodec.payload(header, in: record, seq: seq), header)
        }
        var deltas: [(EventCodec.Header, UnsafeRawBufferPointer, UInt64)] = []
        var current = (header, record, seq)
        while current.0.isDelta {
            deltas.append(current)
            let delta = try EventCodec.delta(current.0, in: current.1, seq: current.2)
            let (baseHeader, base) = try deltaBase(txn, delta, of: current.0, in: current.1, seq: current.2)
            current = (baseHeader, base, delta.base)
        }
        if isKnown, let known { return (known.payload, current.0) }
        var payload = try EventCodec.payload(current.0, in: current.1, seq: current.2)
        for (deltaHeader, deltaRecord, deltaSeq) in deltas.reversed() {
            payload = try EventCodec.applyDelta(deltaHeader, in: deltaRecord, seq: deltaSeq, to: payload)
        }
        return (payload, current.0)
    }

    /// The base of delta put `seq`, checked (its checksum too) to be a put of the same key that
    /// holds its payload (no reference) at a depth one short of the delta's. A missing or
    /// mismatched base is corruption of the delta; a damaged base is reported at its own seq.
    func deltaBase(_ txn: Transaction, _ delta: EventCodec.DeltaBody, of header: EventCodec.Header,
                   in record: UnsafeRawBufferPointer, seq: UInt64) throws -> (EventCodec.Header, UnsafeRawBufferPointer) {
        guard let base = try txn.get(table.events, SeqKey.bytes(delta.base)) else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "its delta base at seq \(delta.base) is missing")
        }
        let baseHeader = try EventCodec.decodeHeader(base, seq: delta.base)
        guard baseHeader.kind == .put, !baseHeader.isReference,
              EventCodec.keyBytes(baseHeader, in: base).elementsEqual(EventCodec.keyBytes(header, in: record)),
              try EventCodec.depth(baseHeader, in: base, seq: delta.base) == delta.depth - 1
        else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "its delta base at seq \(delta.base) does not match that record")
        }
        return (baseHeader, base)
    }

    /// What the appending task needs of the version a put replaces, to store the put as a
    /// reference to it or a delta against it: the record that holds the live payload of `key`
    /// (checksum checked), its chain depth, the CRC-32 it ends with, the payload, and how well
    /// the whole put that starts its chain compressed. nil when there is none or it cannot be
    /// read: the put is then stored whole, as it would be anyway. `known`, a version of the key
    /// remembered from before (``RecentPayloads``), gives the payload when the record that holds
    /// the live payload is the one it was remembered from: then nothing is inflated.
    ///
    /// The chain under the live record is read and checked either way (each base's checksum): a
    /// damaged base leaves the put whole, never a delta on a chain that cannot be rebuilt.
    func baseVersion(_ txn: Transaction, key: [UInt8], known: RememberedPayload? = nil) -> BaseVersion? {
        guard let seq = liveEntryIfReadable(txn, key: key)?.payloadSeq,
              let record = try? txn.get(table.events, SeqKey.bytes(seq)),
              let header = try? EventCodec.decodeHeader(record, seq: seq),
              header.kind == .put, !header.isReference, EventCodec.keyBytes(header, in: record).elementsEqual(key),
              let checksum = EventCodec.storedChecksum(record),
              let depth = try? EventCodec.depth(header, in: record, seq: seq),
              let (payload, whole) = try? rebuilt(txn, header, in: record, seq: seq, known: known)
        else { return nil }
        return BaseVersion(seq: seq, checksum: checksum, depth: depth, payload: payload, compression: whole.compression)
    }

    /// A put's payload as ``baseVersion(_:key:known:)`` found it, copied out of the transaction.
    struct BaseVersion {
        var seq: UInt64
        var checksum: UInt32
        var depth: Int
        var payload: Data
        /// Compressed bytes per payload byte of the whole put that starts the chain: what a
        /// whole copy of a similar payload of this key would cost, without compressing it.
        var compression: Double
    }

    /// The record that holds the payload bytes of the put `record`: itself, or the earlier put it
    /// references (which may be a delta), checked to be a put of the same key and length.
    func payloadRecord(_ txn: Transaction, _ header: EventCodec.Header, in record: UnsafeRawBufferPointer, seq: UInt64)
        throws -> (EventCodec.Header, UnsafeRawBufferPointer, UInt64) {
        let source = try EventCodec.payloadSeq(header, in: record, seq: seq)
        guard source != seq else { return (header, record, seq) }
        guard let target = try txn.get(table.events, SeqKey.bytes(source)) else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "its payload is at seq \(source), which is missing")
        }
        let targetHeader = try EventCodec.decodeHeader(target, seq: source)
        guard targetHeader.kind == .put, !targetHeader.isReference, targetHeader.payloadLength == header.payloadLength,
              EventCodec.keyBytes(targetHeader, in: target).elementsEqual(EventCodec.keyBytes(header, in: record))
        else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "its payload reference to seq \(source) does not match that record")
        }
        return (targetHeader, target, source)
    }

    // MARK: state reads

    /// The state now. The `state` table only caches the fold of the log, so a damaged row is
    /// answered by the fold (nearest checkpoint plus the tail), as ``entry(_:key:onDamaged:)``
    /// answers it, and `onDamaged` learns the keys of the damaged rows (`rebuild` rewrites them).
    /// The rows that decode stand: a damaged record elsewhere in the log, which the fold takes as
    /// it reads it, must not change the answer for keys whose rows are whole.
    func currentEntries(_ txn: Transaction, onDamaged: ([String]) -> Void = { _ in }) throws -> [LogState.Entry] {
        let (rows, malformed) = try storedRows(txn)
        guard !malformed.isEmpty else { return rows.map(\.entry) }
        onDamaged(malformed.map { String(decoding: $0, as: UTF8.self) })
        let folded = try foldedState(txn)
        let repaired = malformed.compactMap { key in folded.entry(forKey: key).map { (key: key, entry: $0) } }
        return (rows + repaired).sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.entry)
    }

    /// Every row of the stored state that decodes, and the keys of those that do not.
    func storedEntries(_ txn: Transaction) throws -> (entries: [LogState.Entry], malformed: [String]) {
        let (rows, malformed) = try storedRows(txn)
        return (rows.map(\.entry), malformed.map { String(decoding: $0, as: UTF8.self) })
    }

    /// ``storedEntries(_:)`` with each key's bytes as the `state` table holds them.
    func storedRows(_ txn: Transaction) throws -> (rows: [StateFold.Row], malformed: [[UInt8]]) {
        var rows: [StateFold.Row] = []
        var malformed: [[UInt8]] = []
        try txn.forEachRow(table.state) { row in
            let key = String(decoding: row.key, as: UTF8.self)
            if let entry = StateRowCodec.decode(key: key, row.value) {
                rows.append((Array(row.key), entry))
            } else {
                malformed.append(Array(row.key))
            }
        }
        return (rows, malformed)
    }

    /// `entry` with the max age, metadata and recording time of its put. The state keeps only what
    /// folding needs; the policy stays in the put, one read away. A put that cannot be read
    /// leaves them empty (``EventLog/verify()`` names the damage).
    func withRecordedPolicy(_ entry: LogState.Entry, _ txn: Transaction) throws -> LogState.Entry {
        guard let record = try txn.get(table.events, SeqKey.bytes(entry.seq)),
              let header = try? EventCodec.decodeHeader(record, seq: entry.seq, verifyChecksum: false)
        else { return entry }
        var entry = entry
        entry.maxAge = header.recordedMaxAge
        entry.recordedAt = Date(stamp: header.recordedAt)
        entry.metadata = (try? EventCodec.metadata(header, in: record, seq: entry.seq)) ?? [:]
        return entry
    }

    /// `entry` with its put's policy (as ``withRecordedPolicy(_:_:)``) when the record at its seq
    /// is that put: a put of `key` with the row's timestamp. `nil` when the row names another
    /// record (a damaged row: a flipped bit in its seq), which a reader must not judge the key by.
    func checkedAgainstItsPut(_ entry: LogState.Entry, key: [UInt8], _ txn: Transaction) throws -> LogState.Entry? {
        guard let record = try txn.get(table.events, SeqKey.bytes(entry.seq)),
              let header = try? EventCodec.decodeHeader(record, seq: entry.seq, verifyChecksum: false),
              header.kind == .put, EventCodec.keyBytes(header, in: record).elementsEqual(key),
              header.timestamp.bitPattern == entry.timestamp.stamp.bitPattern
        else { return nil }
        return try withRecordedPolicy(entry, txn)
    }

    /// The key's live entry for the append path, where an entry that cannot be read counts as
    /// none: the put or delete being appended replaces or removes it, instead of failing the group.
    private func liveEntryIfReadable(_ txn: Transaction, key: [UInt8]) -> LogState.Entry? {
        (try? entry(txn, key: key)) ?? nil
    }

    /// The key's live entry: its `state` row, or, when that row is damaged, the fold of the log
    /// (see ``currentEntries(_:onDamaged:)``).
    func entry(_ txn: Transaction, key: [UInt8], onDamaged: ([String]) -> Void = { _ in }) throws -> LogState.Entry? {
        guard let raw = try txn.get(table.state, key) else { return nil }
        let name = String(decoding: key, as: UTF8.self)
        if let entry = StateRowCodec.decode(key: name, raw) { return entry }
        onDamaged([name])
        return try foldedEntry(txn, key: key)
    }

    /// The key's live entry according to the log alone.
    func foldedEntry(_ txn: Transaction, key: [UInt8]) throws -> LogState.Entry? {
        try foldedState(txn).entry(forKey: key)
    }

    /// The state according to the log alone (the nearest checkpoint plus the tail), as of
    /// the last committed seq: in a write transaction, without the events it has appended so far.
    private func foldedState(_ txn: Transaction) throws -> StateFold {
        try foldedState(txn, asOf: try lastSeq(txn))
    }

    // MARK: folding

    /// Folds the records with seq in `range` into `folded`, reading headers only and checking
    /// their framing, not their checksums: a checksum covers the payload too, which a fold never
    /// reads, and appends applied every record whatever its later damage. `verify` checks every
    /// byte. A record whose framing fails is skipped and reported to `onCorrupt`.
    func fold(_ txn: Transaction, into folded: inout StateFold, range: ClosedRange<UInt64>,
              onCorrupt: (UInt64, CacheLogError) -> Void, onEvent: (UInt64, inout StateFold) throws -> Void = { _, _ in }) throws {
        try txn.withCursor(table.events, from: .atLeast(SeqKey.bytes(range.lowerBound))) { rows in
            while let row = try rows.next(), let seq = SeqKey.decode(row.key), seq <= range.upperBound {
                do {
                    let header = try EventCodec.decodeHeader(row.value, seq: seq, verifyChecksum: false)
                    try folded.apply(header, record: row.value, seq: seq)
                } catch let error as CacheLogError {
                    onCorrupt(seq, error)
                }
                try onEvent(seq, &folded)
            }
        }
    }

    /// The state that stands for compacted history: the checkpoint at `base`, or an empty one
    /// when nothing was compacted (`base` is 0).
    func baseState(_ txn: Transaction, base: UInt64) throws -> StateFold {
        guard base > 0 else { return StateFold() }
        guard let raw = try txn.get(table.checkpoints, SeqKey.bytes(base)) else {
            throw CacheLogError.corruptCheckpoint(seq: base, detail: "the compaction base checkpoint is missing")
        }
        return try CheckpointCodec.decode(raw, seq: base)
    }

    /// The seqs keyed in table `dbi` (events or checkpoints) from `from` up to, not including, `below`.
    func seqs(_ txn: Transaction, in table: Table, from: UInt64 = 0, below: UInt64 = .max) throws -> [UInt64] {
        try txn.withCursor(table, from: .atLeast(SeqKey.bytes(from))) { rows in
            var seqs: [UInt64] = []
            while let row = try rows.next(), let seq = SeqKey.decode(row.key), seq < below {
                seqs.append(seq)
            }
            return seqs
        }
    }

    /// The state after `seq`: the nearest checkpoint at or before it, plus the tail.
    ///
    /// Checkpoints are derived data: one that does not decode is passed over for an earlier one,
    /// or, before any compaction, for the log from its start. Only the compaction base checkpoint
    /// stands for records that are gone, so only its damage is an error.
    func foldedState(_ txn: Transaction, asOf seq: UInt64) throws -> StateFold {
        let base = try baseSeq(txn)
        guard seq >= base else { throw CacheLogError.historyCompacted(firstAvailable: base) }
        var folded = StateFold()
        var start: UInt64 = 1
        let checkpoint: (UInt64, StateFold)? = try txn.withCursor(table.checkpoints, from: .atMost(SeqKey.bytes(seq)), reverse: true) { rows in
            while let row = try rows.next(), let at = SeqKey.decode(row.key), at >= base {
                do {
                    return (at, try CheckpointCodec.decode(row.value, seq: at))
                } catch CacheLogError.corruptCheckpoint where at > base {
                    continue
                }
            }
            if base > 0 {
                throw CacheLogError.corruptCheckpoint(seq: base, detail: "the compaction base checkpoint is missing")
            }
            return nil
        }
        if let (at, snapshot) = checkpoint {
            folded = snapshot
            start = at + 1
        }
        if seq >= start {
            try fold(txn, into: &folded, range: start...seq, onCorrupt: { _, _ in })
        }
        return folded
    }

    // MARK: positions


    /// The seq of the record at or after `seq` and its recorded time.
    ///
    /// Only the recorded time is needed, and it sits at a fixed offset of the header: a record
    /// whose framing is damaged elsewhere still says when it was appended, and one whose time
    /// is unreadable or not a number is passed over, so that one bad record does not fail
    /// every question asked by date.
    private func record(_ txn: Transaction, atLeast seq: UInt64) throws -> (UInt64, Double)? {
        try txn.withCursor(table.events, from: .atLeast(SeqKey.bytes(seq))) { rows in
            while let row = try rows.next(), let at = SeqKey.decode(row.key) {
                if let recordedAt = EventCodec.recordedAt(row.value), recordedAt.isFinite { return (at, recordedAt) }
            }
            return nil
        }
    }

    /// The first seq recorded at or after `date` (lastSeq + 1 when there is none).
    /// Recorded times never decrease along the log, so this is a binary search.
    func firstSeq(_ txn: Transaction, recordedAtOrAfter date: Date) throws -> UInt64 {
        let target = date.stamp
        var low: UInt64 = 1
        var high = try lastSeq(txn) + 1
        while low < high {
            let mid = low + (high - low) / 2
            guard let (at, recordedAt) = try record(txn, atLeast: mid) else { high = mid; continue }
            if recordedAt >= target { high = mid } else { low = at + 1 }
        }
        return low
    }

    /// The last seq recorded at or before `date` (0 when there is none).
    func lastSeq(_ txn: Transaction, recordedAtOrBefore date: Date) throws -> UInt64 {
        // The first seq after the date, minus one: seqs are dense except for compacted history,
        // whose removed records cannot be asked for anyway.
        return try firstSeq(txn, recordedAtOrAfter: Date(stamp: date.stamp.nextUp)) - 1
    }

    func resolve(_ txn: Transaction, _ position: LogPosition, upperBound: Bool) throws -> UInt64 {
        switch position {
        case .seq(let seq): return seq
        case .date(let date):
            return upperBound ? try lastSeq(txn, recordedAtOrBefore: date) : try firstSeq(txn, recordedAtOrAfter: date)
        }
    }
}
