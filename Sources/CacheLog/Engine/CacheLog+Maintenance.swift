import CLMDB
import Foundation

/// What ``CacheLog/verify()`` found.
public struct VerifyReport: Sendable, Equatable {
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The record (or checkpoint) the problem is at, when it has one.
        public var seq: UInt64?
        public var message: String
        /// The damage is in data derived from the log (a projection row, a checkpoint after the
        /// compaction base), which ``CacheLog/rebuildProjection()`` restores from the log.
        public var fixedByRebuild = false
        public var description: String { seq.map { "seq \($0): \(message)" } ?? message }
    }

    public var recordsChecked: Int
    public var checkpointsChecked: Int
    public var problems: [Problem]
    public var isClean: Bool { problems.isEmpty }
}

/// What ``CacheLog/rebuildProjection()`` did.
public struct RebuildReport: Sendable, Equatable {
    public var eventsFolded: Int
    public var liveKeys: Int
    /// Records skipped because they failed their checks: their effect on the state is unknown.
    public var corruptSeqs: [UInt64]
    /// Keys whose stored projection row was wrong (damaged, stale, missing or extra) and is now
    /// what the log says; empty when the projection was already right.
    public var repairedKeys: [String] = []
    /// Checkpoints written because the stored one was missing or differed.
    public var checkpointsRewritten: Int = 0
    /// Checkpoints removed because the log does not place one there.
    public var checkpointsRemoved: Int = 0
    /// Counters of the `meta` table set back to what the log says (`lastSeq`, `lastRecordedAt`).
    public var restoredCounters: [String] = []
}

/// What ``CacheLog/compact(before:)`` did.
public struct CompactionReport: Sendable, Equatable {
    /// Records removed from the log.
    public var removed: Int
    /// Records before the cut kept because the live state, or a payload after the cut, refers to them.
    public var keptLive: Int
    /// History before this seq is gone; state as of any later seq is still available.
    public var firstAvailable: UInt64
}

extension CacheLog {
    /// Checks every record (framing, checksum, inflate, kind, seq order, recorded-time order),
    /// every checkpoint, and that the stored projection equals the fold of the log.
    ///
    /// Runs in one read transaction, so it checks one consistent snapshot while appends go on.
    public func verify() throws -> VerifyReport {
        try environment.read { txn in
            var problems: [VerifyReport.Problem] = []
            var records = 0
            var base: UInt64 = 0, last: UInt64 = 0
            do {
                last = try tables.lastSeq(txn)
                base = try tables.baseSeq(txn)
            } catch let error as CacheLogError {
                // Go on with what the log says, so the rest is still checked.
                problems.append(.init(seq: nil, message: error.description, fixedByRebuild: true))
                last = min(try tables.lastRecordSeq(txn) ?? 0, LogTables.maxSeq)
                base = min(try tables.u64(txn, MetaKey.baseSeq), last)
            }
            if !Double(bitPattern: try tables.u64(txn, MetaKey.lastRecordedAt)).isFinite {
                problems.append(.init(seq: nil, message: "the last recorded time in meta is not a number", fixedByRebuild: true))
            }
            if try tables.u64(txn, MetaKey.checkpointSeq) > last {
                problems.append(.init(seq: nil, message: "the checkpoint seq in meta is past the last seq \(last)", fixedByRebuild: true))
            }
            var projection = Projection()
            do {
                projection = try tables.baseProjection(txn, base: base)
            } catch let error as CacheLogError {
                problems.append(.init(seq: base, message: error.description))
            }
            var checkpoints: [UInt64: Projection] = [:]
            var checkpointCount = 0
            try txn.withCursor(tables.dbs.checkpoints) { cursor in
                var row = try cursor.move(MDB_FIRST)
                while let current = row {
                    checkpointCount += 1
                    if let seq = SeqKey.decode(current.key) {
                        do { checkpoints[seq] = try CheckpointCodec.decode(current.value, seq: seq) } catch let error as CacheLogError {
                            problems.append(.init(seq: seq, message: error.description, fixedByRebuild: seq > base))
                        }
                    } else {
                        problems.append(.init(seq: nil, message: "checkpoint key of \(current.key.count) bytes", fixedByRebuild: true))
                    }
                    row = try cursor.move(MDB_NEXT)
                }
            }

            var previousSeq: UInt64 = 0
            var previousTime = -Double.infinity
            /// A record failed its checks: the fold saw it as its damaged header says, so a
            /// projection or checkpoint that differs from the fold is no sign of their own damage.
            var recordsDamaged = false
            /// Seqs that are gone although something needs them, and what needs them.
            var usersOfMissing: [UInt64: [String]] = [:]
            try txn.withCursor(tables.dbs.events) { cursor in
                var row = try cursor.move(MDB_FIRST)
                while let current = row {
                    records += 1
                    if let seq = SeqKey.decode(current.key) {
                        // After the compaction base every seq must be there; before it, only the
                        // kept records are (checked below through the references to them).
                        if seq > base, let gap = Self.missing(after: max(previousSeq, base), before: seq) {
                            problems.append(gap)
                        }
                        if seq > last { problems.append(.init(seq: seq, message: "beyond the last seq \(last) in meta", fixedByRebuild: true)) }
                        previousSeq = seq
                        do {
                            // The fold reads framing only, as appends, rebuild and time travel do, so
                            // a record whose payload bytes are damaged still counts as it did when
                            // appended; the checksum and payload checks below report the damage.
                            let header = try EventCodec.decodeHeader(current.value, seq: seq, verifyChecksum: false)
                            if seq > base { try projection.apply(header, record: current.value, seq: seq) }
                            if !header.recordedAt.isFinite {
                                problems.append(.init(seq: seq, message: "recorded at a time that is not a number"))
                            } else if header.recordedAt < previousTime {
                                problems.append(.init(seq: seq, message: "recorded before the record preceding it"))
                            }
                            if header.recordedAt.isFinite { previousTime = header.recordedAt }
                            _ = try EventCodec.decodeHeader(current.value, seq: seq)
                            // A reference is checked against its target; the target's bytes are checked at the target.
                            if header.kind == .put {
                                if header.isReference {
                                    // A missing target is one problem, at its seq, however many puts refer to it.
                                    let source = try EventCodec.payloadSeq(header, in: current.value, seq: seq)
                                    if try txn.get(tables.dbs.events, SeqKey.bytes(source)) == nil {
                                        usersOfMissing[source, default: []].append("the put at seq \(seq)")
                                    } else {
                                        _ = try tables.payloadRecord(txn, header, in: current.value, seq: seq)
                                    }
                                } else {
                                    _ = try EventCodec.payload(header, in: current.value, seq: seq)
                                }
                            }
                        } catch let error as CacheLogError {
                            recordsDamaged = true
                            if case .corruptRecord(let at, let detail) = error {
                                // `at` differs from `seq` when the bad bytes are in the record a reference points to.
                                problems.append(.init(seq: at, message: "corrupt record: \(detail)"))
                            } else {
                                problems.append(.init(seq: seq, message: error.description))
                            }
                        }
                        if seq > base, let checkpoint = checkpoints[seq], checkpoint != projection {
                            problems.append(.init(seq: seq, message: "checkpoint differs from the fold of the log", fixedByRebuild: !recordsDamaged))
                        }
                    } else {
                        problems.append(.init(seq: nil, message: "record key of \(current.key.count) bytes is not a seq"))
                    }
                    row = try cursor.move(MDB_NEXT)
                }
            }
            if last > base, previousSeq < last, let gap = Self.missing(after: max(previousSeq, base), before: last + 1) {
                problems.append(gap)
            }

            var (stored, malformed) = try tables.storedEntries(txn)
            for key in malformed {
                problems.append(.init(seq: nil, message: CacheLogError.corruptProjection(key: key).description, fixedByRebuild: true))
            }
            var folded = projection.ordered()
            // A damaged row is one problem, reported above, not also a missing entry.
            if !malformed.isEmpty {
                let damaged = Set(malformed.map { Array($0.utf8) })
                folded.removeAll { damaged.contains(Array($0.key.utf8)) }
                stored.removeAll { damaged.contains(Array($0.key.utf8)) }
            }
            // Compaction keeps the records the live state uses; one of those gone is a missing seq too.
            for entry in folded {
                for seq in Set([entry.seq, entry.payloadSeq]) where seq <= base {
                    if try txn.get(tables.dbs.events, SeqKey.bytes(seq)) == nil {
                        usersOfMissing[seq, default: []].append("the live entry of key \"\(entry.key)\"")
                    }
                }
            }
            // Missing seqs after the base are reported as gaps already.
            for (seq, users) in usersOfMissing.sorted(by: { $0.key < $1.key }) where seq <= base {
                problems.append(.init(seq: seq, message: "record missing (\(users.joined(separator: ", ")) uses it)"))
            }
            if !LiveEntry.sameEntries(stored, folded) {
                // Keyed by bytes: canonically equivalent keys are different keys to LMDB.
                let storedByKey = Dictionary(stored.map { (Array($0.key.utf8), $0) }, uniquingKeysWith: { a, _ in a })
                let foldedByKey = Dictionary(folded.map { (Array($0.key.utf8), $0) }, uniquingKeysWith: { a, _ in a })
                let keys = Set(storedByKey.keys).union(foldedByKey.keys).sorted { $0.lexicographicallyPrecedes($1) }
                for bytes in keys {
                    let have = storedByKey[bytes], want = foldedByKey[bytes]
                    let key = String(decoding: bytes, as: UTF8.self)
                    if have != want || have?.key.utf8.elementsEqual(bytes) == false {
                        problems.append(.init(
                            seq: have?.seq ?? want?.seq,
                            message: "projection of key \"\(key)\" is \(Self.describe(have, detailed: have?.seq == want?.seq)), the log says \(Self.describe(want, detailed: have?.seq == want?.seq))",
                            fixedByRebuild: !recordsDamaged))
                    }
                }
            }
            // A bad record that others reference is reported once.
            var seen = Set<String>()
            problems = problems.filter { seen.insert($0.description).inserted }
            return VerifyReport(recordsChecked: records, checkpointsChecked: checkpointCount, problems: problems)
        }
    }

    /// The problem for the seqs strictly between `previous` and `next`, if there are any.
    private static func missing(after previous: UInt64, before next: UInt64) -> VerifyReport.Problem? {
        guard next > previous + 1 else { return nil }
        let first = previous + 1, last = next - 1
        return .init(seq: first, message: first == last ? "record missing" : "records missing, seq \(first) through \(last)")
    }

    /// The entry as a problem names it: by its seq, and by every field when the seqs agree, so a
    /// row that differs only in its timestamp, size or payload seq never reads as equal to the log's.
    private static func describe(_ entry: LiveEntry?, detailed: Bool) -> String {
        guard let entry else { return "absent" }
        guard detailed else { return "live at seq \(entry.seq)" }
        return "live at seq \(entry.seq) (cached at \(entry.timestamp.timeIntervalSince1970), \(entry.bytes) bytes, payload at seq \(entry.payloadSeq))"
    }

    /// Drops the stored projection and checkpoints and rebuilds them from the log alone, reading
    /// record headers only (no payload is inflated). The result is identical to what the appends
    /// maintained, which ``verify()`` checks.
    @discardableResult
    public func rebuildProjection() async throws -> RebuildReport {
        let tables = self.tables, environment = self.environment, logger = self.logger
        let report = try await writer.exclusive {
            try environment.write { txn in
                var restored = try tables.restoreCounters(txn)
                let base = try tables.baseSeq(txn)
                let last = try tables.lastSeq(txn)
                var projection = try tables.baseProjection(txn, base: base)
                // Checkpoints after the base are derived data too. The fold produces them at the
                // stored positions (appends place them at batch ends, which the log does not
                // record), or by the interval when there are none, and writes each only where the
                // stored one differs: a write transaction holds every page it dirties in memory.
                var stale = Set(try tables.seqs(txn, in: tables.dbs.checkpoints, from: base + 1))

                let positions = stale
                var corrupt: [UInt64] = []
                var folded = 0
                var rewritten = 0
                var lastCheckpoint = base
                if last > base {
                    try tables.fold(txn, into: &projection, range: (base + 1)...last,
                                    onCorrupt: { seq, _ in corrupt.append(seq) }) { seq, current in
                        folded += 1
                        let gap = seq - lastCheckpoint
                        let due = positions.isEmpty
                            ? gap >= UInt64(tables.checkpointInterval) && gap >= UInt64(current.count)
                            : positions.contains(seq)
                        if due {
                            let encoded = try CheckpointCodec.encode(current.orderedRows())
                            if try txn.get(tables.dbs.checkpoints, SeqKey.bytes(seq)).map({ !$0.elementsEqual(encoded) }) ?? true {
                                try txn.put(tables.dbs.checkpoints, SeqKey.bytes(seq), encoded)
                                rewritten += 1
                            }
                            stale.remove(seq)
                            lastCheckpoint = seq
                        }
                    }
                }
                // Checkpoints before the base stand for nothing: compaction removed their history.
                stale.formUnion(try tables.seqs(txn, in: tables.dbs.checkpoints, below: base))
                for seq in stale { try txn.delete(tables.dbs.checkpoints, SeqKey.bytes(seq)) }
                let repaired = try Self.rewriteState(txn, tables: tables, to: projection.orderedRows())
                if try tables.u64(txn, MetaKey.checkpointSeq) != lastCheckpoint {
                    try tables.setU64(txn, MetaKey.checkpointSeq, lastCheckpoint)
                    restored.append("checkpointSeq")
                }
                return RebuildReport(
                    eventsFolded: folded, liveKeys: projection.count, corruptSeqs: corrupt, repairedKeys: repaired,
                    checkpointsRewritten: rewritten, checkpointsRemoved: stale.count, restoredCounters: restored)
            }
        }
        if !report.corruptSeqs.isEmpty {
            logger.warning("rebuild skipped corrupt records", metadata: ["seqs": "\(report.corruptSeqs)"])
        }
        return report
    }

    /// Makes the `state` table hold exactly `entries` (in key order), writing only the rows that
    /// differ: a write transaction holds every page it dirties in memory. Returns the keys changed.
    private static func rewriteState(_ txn: Transaction, tables: LogTables, to rows: [(key: [UInt8], entry: LiveEntry)]) throws -> [String] {
        var wanted: [[UInt8]: [UInt8]] = [:]
        for row in rows { wanted[row.key] = ProjectionEntryCodec.encode(row.entry) }
        var extra: [[UInt8]] = []
        var kept = Set<[UInt8]>()
        try txn.withCursor(tables.dbs.state) { cursor in
            var row = try cursor.move(MDB_FIRST)
            while let current = row {
                let key = Array(current.key)
                if let value = wanted[key], current.value.elementsEqual(value) { kept.insert(key) } else if wanted[key] == nil { extra.append(key) }
                row = try cursor.move(MDB_NEXT)
            }
        }
        var repaired = extra
        for key in extra { try txn.delete(tables.dbs.state, key) }
        for (key, _) in rows {
            guard !kept.contains(key), let value = wanted[key] else { continue }
            try txn.put(tables.dbs.state, key, value)
            repaired.append(key)
        }
        return repaired.sorted { $0.lexicographicallyPrecedes($1) }.map { String(decoding: $0, as: UTF8.self) }
    }

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
                    return CompactionReport(removed: 0, keptLive: 0, firstAvailable: base)
                }
                let newBase = cut - 1
                // The state right before the cut stands in for everything removed.
                var baseState = try tables.projection(txn, asOf: newBase)
                try tables.writeCheckpoint(txn, seq: newBase, rows: baseState.orderedRows())

                // Keep the live puts, the records holding their payloads, and every record before
                // the cut that a put after it refers to for its (unchanged) payload.
                var live = Set(try tables.currentEntries(txn, onDamaged: self.logDamagedRows).flatMap { [$0.seq, $0.payloadSeq] })
                try txn.withCursor(tables.dbs.events) { cursor in
                    var row = try cursor.seek(atLeast: SeqKey.bytes(cut))
                    while let current = row, let seq = SeqKey.decode(current.key) {
                        if let header = try? EventCodec.decodeHeader(current.value, seq: seq, verifyChecksum: false),
                           header.kind == .put, header.isReference,
                           let source = try? EventCodec.payloadSeq(header, in: current.value, seq: seq), source < cut {
                            live.insert(source)
                        }
                        row = try cursor.move(MDB_NEXT)
                    }
                }
                let before = try tables.seqs(txn, in: tables.dbs.events, below: cut)
                let doomed = before.filter { !live.contains($0) }
                for seq in doomed { try txn.delete(tables.dbs.events, SeqKey.bytes(seq)) }
                for seq in try tables.seqs(txn, in: tables.dbs.checkpoints, below: newBase) {
                    try txn.delete(tables.dbs.checkpoints, SeqKey.bytes(seq))
                }
                try tables.setU64(txn, MetaKey.baseSeq, newBase)
                if try tables.u64(txn, MetaKey.checkpointSeq) < newBase {
                    try tables.setU64(txn, MetaKey.checkpointSeq, newBase)
                }
                return CompactionReport(removed: doomed.count, keptLive: before.count - doomed.count, firstAvailable: newBase)
            }
        }
    }
}
