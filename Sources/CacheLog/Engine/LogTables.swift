#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The operations on the tables inside one transaction. Every write here runs inside the
/// writer's transaction, so the append, the state and the counters commit together or not at all.
struct LogTables {
    /// The table handles.
    let schema: Tables
    /// The counters in `meta`.
    let counters: MetaCounters
    /// Reads a put's payload through its reference and delta chain.
    let payloads: PayloadReader
    /// Reads the state: its rows, or the fold of the log.
    let state: StateReader
    /// Turns dates and positions into seqs.
    let positions: LogPositions
    /// Each key's seqs (``Tables/keyIndex``).
    let keyIndex: KeyIndex
    /// Which puts need which records' payload bytes (``Tables/refs``).
    let refs: PayloadRefs
    /// Minimum number of events between checkpoints.
    let checkpointInterval: Int

    init(_ tables: Tables, checkpointInterval: Int) {
        schema = tables
        counters = MetaCounters(schema: tables)
        payloads = PayloadReader(schema: tables)
        state = StateReader(schema: tables, counters: counters)
        positions = LogPositions(schema: tables, counters: counters)
        keyIndex = KeyIndex(schema: tables, counters: counters, state: state)
        refs = PayloadRefs(schema: tables, counters: counters, state: state)
        self.checkpointInterval = checkpointInterval
    }

    // MARK: append

    /// One batch for ``append(_:batches:now:)``: its events, and the conditions it is appended under.
    typealias Batch = (events: [EventCodec.Prepared], conditions: [AppendCondition])

    /// Appends the batches in order, each event with the next seq, and folds them into the
    /// state. Returns each batch's seq range, or the live entry that superseded it: a batch whose
    /// condition fails (judged after the batches before it) writes nothing and takes no seqs.
    /// Safe to run again after an abort (map growth): it starts from what the transaction reads.
    /// A live entry that cannot be read counts as none here (`try?`): the put or delete being
    /// appended replaces or removes it, instead of failing the group.
    func append(_ txn: Transaction, batches: [Batch], now: Date) throws -> [Result<AppendedBatch, SupersededBatch>] {
        var seq = try counters.lastSeq(txn)
        let lastBefore = seq
        // Recorded time never goes backward, so that "as of a date" can binary-search the log.
        let recordedAt = max(now.stamp, try counters.lastRecordedAt(txn))
        // A checkpoint seq past the last seq is damage: the next checkpoint is due at once.
        var checkpointSeq = min(try counters.value(txn, MetaKey.checkpointSeq), seq)
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
                    if (try? state.entry(txn, key: condition.key)) == nil { leftOut.append(condition.key) }
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
                } else if event.kind == .delete || event.kind == .expire, let entry = (try? state.entry(txn, key: event.key)) {
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
                    try txn.put(schema.events, SeqKey.bytes(seq), record, options: .append)
                } catch let error as CacheLogError where error.isKeyExists {
                    throw CacheLogError.corruptMeta(detail: "lastSeq is \(seq - 1), but the log holds later records")
                }
                if event.kind.isAboutAKey {
                    try applyToState(txn, event, seq: seq, payloadSeq: payloadSeq)
                    try keyIndex.index(txn, key: event.key, seq: seq)
                } else {
                    // The policy's record, about no key: `meta` names the newest, which every
                    // writer applies.
                    try counters.set(txn, MetaKey.retentionSeq, seq)
                }
                if let source { try refs.addRef(txn, source: source, dependent: seq) }
            }
            ranges.append(.success(AppendedBatch(range: first...seq, leftOut: leftOut, puts: puts)))
            if try checkpointDue(txn, seq: seq, last: checkpointSeq) {
                // Rows that do not decode are left out: a damaged row must not block every append.
                try writeCheckpoint(txn, seq: seq, rows: try state.rows(txn).rows)
                checkpointSeq = seq
            }
        }
        try counters.set(txn, MetaKey.lastSeq, seq)
        // Only what was appended moves recorded time: a save refused for a newer cache, whose
        // clock may be far ahead, must not stamp the next writer's records with that clock.
        if seq > lastBefore { try txn.put(schema.meta, MetaKey.lastRecordedAt, MetaStamp.encode(recordedAt)) }
        try counters.set(txn, MetaKey.checkpointSeq, checkpointSeq)
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
        guard let live = try state.entry(txn, key: condition.key, .judgedForASave),
              live.supersedes(aFetchBeganAt: condition.since)
        else { return nil }
        return SupersededBatch(live: live)
    }

    /// An explicit delete of `key` committed after `position`, as an entry naming the delete (its
    /// seq, and its recorded time as the timestamp): someone removed the key after the fetch
    /// began, and its answer must not bring back what they removed. Found through the key index;
    /// `nil` without one (a database no writer has opened since before it existed).
    private func explicitRemoval(_ txn: Transaction, key: [UInt8], after position: UInt64) throws -> LogState.Entry? {
        guard let keyIndex = schema.keyIndex, !key.isEmpty else { return nil }
        return try txn.withCursor(keyIndex, from: .value(key: key, value: SeqKey.bytes(position + 1), atMost: false)) { seqs in
            while let row = try seqs.next(), let at = SeqKey.decode(row.value) {
                guard at > position, let record = try txn.get(schema.events, SeqKey.bytes(at)),
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
        guard let candidate = (try? state.entry(txn, key: event.key))?.payloadSeq ?? removed[event.key],
              let record = try txn.get(schema.events, SeqKey.bytes(candidate)),
              let header = try? EventCodec.decodeHeader(record, seq: candidate, verifyChecksum: false),
              header.kind == .put, !header.isReference, header.payloadLength == Int(event.payloadLength),
              event.identical == EventCodec.IdenticalPayload(seq: candidate, checksum: EventCodec.storedChecksum(record) ?? 0)
                || !header.isDelta && !event.body.isEmpty && event.body.withUnsafeBytes({ EventCodec.sameBytes(UnsafeRawBufferPointer(rebasing: record[header.body]), $0) }),
              EventCodec.passesChecksum(record, seq: candidate)
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
              let record = try? txn.get(schema.events, SeqKey.bytes(delta.base)),
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
            try txn.put(schema.state, event.key, StateRowCodec.encode(entry))
        case .delete:
            try txn.delete(schema.state, event.key)
        case .expire:
            // Same rule as `StateFold.apply`: only the version cached at `timestamp` expires,
            // stamps compared bit for bit. A damaged row is judged by the log's entry for the
            // key, so the expire removes it too.
            guard let raw = try txn.get(schema.state, event.key) else { return }
            let live: UInt64? = StateRowCodec.decode(key: "", raw).map { $0.timestamp.stamp.bitPattern }
                ?? (try? state.foldedState(txn).timestampBits(forKey: event.key))
            guard live == event.timestamp.bitPattern else { return }
            try txn.delete(schema.state, event.key)
        case .retention:
            break
        }
    }

    /// A checkpoint costs a pass over every live key, so checkpoints come no closer together than
    /// the number of live keys: the cost per event stays constant however many keys there are.
    private func checkpointDue(_ txn: Transaction, seq: UInt64, last: UInt64) throws -> Bool {
        let gap = seq - last
        guard gap >= UInt64(checkpointInterval) else { return false }
        return gap >= UInt64(try txn.entryCount(schema.state))
    }

    func writeCheckpoint(_ txn: Transaction, seq: UInt64, rows: [StateFold.Row]) throws {
        try txn.put(schema.checkpoints, SeqKey.bytes(seq), try CheckpointCodec.encode(rows))
    }

    // MARK: removing records and upgrading the format

    /// Removes record `seq` from the log with its entries in the key index and in `refs` (as a
    /// dependent, and as a source whose dependents are all gone), in the caller's write
    /// transaction. Refuses, returning nil, while a stored record needs its payload bytes
    /// (``isPayloadSource(_:_:)``): remove those first, or keep it. Returns the bytes freed: the
    /// record's, and 8 per entry of the key index or `refs` removed (0 when there was no record).
    ///
    /// It neither moves the compaction base nor touches the state: the caller decides which
    /// records may go (never the live puts, nor the puts of the state at the base).
    @available(*, noasync)
    func removeRecord(_ txn: Transaction, _ seq: UInt64) throws -> Int? {
        guard try !refs.isPayloadSource(txn, seq) else { return nil }
        var freed = 0
        // Entries of dependents that are no longer stored (damage removed them, or a record
        // whose framing was damaged named no source to remove them by).
        if let table = schema.refs {
            freed += SeqKey.size * (try refs.payloadDependents(txn, of: seq).count)
            try txn.delete(table, SeqKey.bytes(seq))
        }
        guard let record = try txn.get(schema.events, SeqKey.bytes(seq)) else { return freed }
        freed += record.count
        // A record whose framing is damaged names no key or source: compaction's walks remove
        // what is left of its entries.
        if let header = try? EventCodec.decodeHeader(record, seq: seq, verifyChecksum: false) {
            if try keyIndex.unindex(txn, key: Array(EventCodec.keyBytes(header, in: record)), seq: seq) { freed += SeqKey.size }
            if let refs = schema.refs, header.kind == .put, let source = try? EventCodec.payloadSource(header, in: record, seq: seq),
               try txn.delete(refs, SeqKey.bytes(source), value: SeqKey.bytes(seq)) {
                freed += SeqKey.size
            }
        }
        try txn.delete(schema.events, SeqKey.bytes(seq))
        return freed
    }

    /// Removes the entries of `table`, whose values are seqs (the key index, `refs`), that name a
    /// record below `cut`, not in `kept`, and gone from the log: those compaction could not remove
    /// by their record, whose framing was damaged (it named no key or source). Returns how many
    /// it removed.
    @available(*, noasync)
    func dropEntriesOfMissingRecords(_ txn: Transaction, in table: Table?, below cut: UInt64, keeping kept: Set<UInt64>) throws -> Int {
        guard let table else { return 0 }
        var stragglers: [([UInt8], [UInt8])] = []
        try txn.forEachRow(table) { row in
            guard let seq = SeqKey.decode(row.value), seq < cut, !kept.contains(seq),
                  try txn.get(self.schema.events, SeqKey.bytes(seq)) == nil
            else { return }
            stragglers.append((Array(row.key), Array(row.value)))
        }
        for (key, value) in stragglers { try txn.delete(table, key, value: value) }
        return stragglers.count
    }

    /// Brings a database written by an earlier format up to this one, in one transaction (a
    /// crash leaves the old format, and the next open starts over): fills the key index (format
    /// 2) and `refs` (format 3) that it lacks, and stamps the format (format 4 changes no stored
    /// value: each says how it stores its dates). Returns the entries added
    /// to each (0 when another process did it first).
    @available(*, noasync)
    func upgradeFormat(_ txn: Transaction) throws -> (keyIndex: Int, refs: Int) {
        let stamped = try stampedFormat(txn)
        guard stamped < Environment.formatVersion else { return (0, 0) }
        let indexed = stamped < Environment.keyIndexFormat ? try keyIndex.entries.fillEmpty(txn) ?? keyIndex.entries.repair(txn) : 0
        let referenced = stamped < Environment.refsFormat ? try refs.entries.fillEmpty(txn) ?? refs.entries.repair(txn) : 0
        try txn.put(schema.meta, MetaKey.format, MetaKey.formatValue(Environment.formatVersion))
        return (indexed, referenced)
    }

    /// The format stamped in `meta`.
    @available(*, noasync)
    func stampedFormat(_ txn: Transaction) throws -> UInt32 {
        try txn.get(schema.meta, MetaKey.format).flatMap(MetaKey.format(in:)) ?? 0
    }
}
