#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The checks behind ``EventLog/verify()``, in the order it runs them over one read transaction.
/// Each check adds what it finds to `problems` and leaves what later checks need (the fold of
/// the log, the decoded checkpoints) in the fields below.
struct Verification {
    let txn: Transaction
    let tables: LogTables
    private(set) var problems: [VerifyReport.Problem] = []

    /// The last seq and the compaction base, from `meta` or, when those are damaged, the log.
    private var last: UInt64 = 0
    private var base: UInt64 = 0
    /// Up to this seq retention removed history: a seq missing there is no damage, unless a
    /// stored record needs it.
    private var trimmedZone: UInt64 = 0
    /// Where each key's history starts, for the keys retention trimmed (``Tables/trims``).
    private var historyStarts: [[UInt8]: UInt64] = [:]
    /// The fold of the log so far: the base checkpoint, then every record after it.
    private var folded = StateFold()
    private var checkpoints: [UInt64: StateFold] = [:]
    private var checkpointCount = 0
    private var recordCount = 0
    /// A record failed its checks: the fold saw it as its damaged header says, so a state row or
    /// checkpoint that differs from the fold is no sign of their own damage.
    private var recordsDamaged = false
    /// Seqs that are gone although something needs them, and what needs them.
    private var usersOfMissing: [UInt64: [String]] = [:]

    init(txn: Transaction, tables: LogTables) {
        self.txn = txn
        self.tables = tables
    }

    /// Verifies the newest commit of the database at `path`, as ``EventLog/verify()`` says.
    ///
    /// - Throws: ``CacheLogError/overlappedWrites(path:)`` when other processes committed twice
    ///   before the pages of each of a few commits could be checked.
    static func report(_ environment: Environment, _ tables: LogTables, path: String) throws -> VerifyReport {
        for _ in 0..<PageTreeCheck.attempts {
            if let report = try snapshotReport(environment, tables) { return report }
        }
        throw CacheLogError.overlappedWrites(path: path)
    }

    /// Verifies the newest commit; nil when other processes committed twice before its pages
    /// could be checked.
    private static func snapshotReport(_ environment: Environment, _ tables: LogTables) throws -> VerifyReport? {
        try environment.read { txn in
            guard try environment.checkPages(txn) else { return nil }
            var verification = Verification(txn: txn, tables: tables)
            try verification.checkCounters()
            try verification.checkCheckpoints()
            try verification.checkRecords()
            try verification.checkState()
            try verification.checkKeyIndex()
            try verification.checkRefs()
            return verification.report()
        }
    }

    /// The counters in `meta`: the last seq, the base, the last recorded time, the checkpoint seq.
    @available(*, noasync)
    mutating func checkCounters() throws {
        do {
            last = try tables.counters.lastSeq(txn)
            base = try tables.counters.baseSeq(txn)
        } catch let error as CacheLogError {
            // Go on with what the log says, so the rest is still checked.
            problems.append(.init(seq: nil, message: error.description, fixedByRebuild: true))
            last = min(try tables.counters.lastRecordSeq(txn) ?? 0, MetaCounters.maxSeq)
            base = min(try tables.counters.value(txn, MetaKey.baseSeq), last)
        }
        if try tables.counters.storedLastRecordedAt(txn)?.isFinite == false {
            problems.append(.init(seq: nil, message: "the last recorded time in meta is not a number", fixedByRebuild: true))
        }
        let retention = Retention(tables: tables)
        trimmedZone = min(try retention.state(txn).zone, last)
        historyStarts = try retention.historyStarts(txn)
        if try tables.counters.value(txn, MetaKey.checkpointSeq) > last {
            problems.append(.init(seq: nil, message: "the checkpoint seq in meta is past the last seq \(last)", fixedByRebuild: true))
        }
    }

    /// Every checkpoint decodes; the base one starts the fold.
    @available(*, noasync)
    mutating func checkCheckpoints() throws {
        do {
            folded = try tables.state.baseState(txn, base: base)
        } catch let error as CacheLogError {
            problems.append(.init(seq: base, message: error.description))
        }
        try txn.forEachRow(tables.schema.checkpoints) { row in
            checkpointCount += 1
            guard let seq = SeqKey.decode(row.key) else {
                problems.append(.init(seq: nil, message: "checkpoint key of \(row.key.count) bytes", fixedByRebuild: true))
                return
            }
            do { checkpoints[seq] = try CheckpointCodec.decode(row.value, seq: seq) } catch let error as CacheLogError {
                problems.append(.init(seq: seq, message: error.description, fixedByRebuild: seq > base))
            }
        }
    }

    /// Every record, in seq order: no gaps after the base, framing, checksum, payload, recorded
    /// time never going backward; and every checkpoint equal to the fold at its seq.
    @available(*, noasync)
    mutating func checkRecords() throws {
        var previousSeq: UInt64 = 0
        var previousTime = -Double.infinity
        try txn.forEachRow(tables.schema.events) { row in
            recordCount += 1
            guard let seq = SeqKey.decode(row.key) else {
                problems.append(.init(seq: nil, message: "record key of \(row.key.count) bytes is not a seq"))
                return
            }
            // After the compaction base every seq must be there; before it, only the kept
            // records are (checked through the references to them).
            if seq > max(base, trimmedZone), let gap = Self.missing(after: max(previousSeq, base, trimmedZone), before: seq) { problems.append(gap) }
            if seq > last { problems.append(.init(seq: seq, message: "beyond the last seq \(last) in meta", fixedByRebuild: true)) }
            previousSeq = seq
            do {
                try checkRecord(row.value, seq: seq, previousTime: &previousTime)
            } catch let error as CacheLogError {
                recordsDamaged = true
                if case .corruptRecord(let at, let detail) = error {
                    // `at` differs from `seq` when the bad bytes are in the record a reference points to.
                    problems.append(.init(seq: at, message: "corrupt record: \(detail)"))
                } else {
                    problems.append(.init(seq: seq, message: error.description))
                }
            }
            // A checkpoint holds keys whose records retention let go since (in a pass that ended,
            // one under way, or one a kill cut short): a key whose history now starts after the
            // checkpoint is not known there, and is compared only where it is.
            if seq > max(base, trimmedZone), let checkpoint = checkpoints[seq], !Self.agree(checkpoint, folded, at: seq, historyStarts) {
                problems.append(.init(seq: seq, message: "checkpoint differs from the fold of the log", fixedByRebuild: !recordsDamaged))
            }
        }
        if last > max(base, trimmedZone), previousSeq < last, let gap = Self.missing(after: max(previousSeq, base, trimmedZone), before: last + 1) {
            problems.append(gap)
        }
    }

    /// Whether a checkpoint at `seq` and the fold there hold the same entries for every key
    /// whose history starts at or before `seq`.
    private static func agree(_ checkpoint: StateFold, _ folded: StateFold, at seq: UInt64, _ starts: [[UInt8]: UInt64]) -> Bool {
        if checkpoint == folded { return true }
        var checkpoint = checkpoint, folded = folded
        let unknown = Set(starts.compactMap { $0.value > seq ? $0.key : nil })
        guard !unknown.isEmpty else { return false }
        let known = { (rows: [StateFold.Row]) in rows.filter { !unknown.contains($0.key) }.map(\.entry) }
        return LogState.Entry.sameEntries(known(checkpoint.orderedRows()), known(folded.orderedRows()))
    }

    @available(*, noasync)
    private mutating func checkRecord(_ record: UnsafeRawBufferPointer, seq: UInt64, previousTime: inout Double) throws {
        // The fold reads framing only, as appends, rebuild and time travel do, so a record whose
        // payload bytes are damaged still counts as it did when appended; the checksum and
        // payload checks below report the damage.
        let header = try EventCodec.decodeHeader(record, seq: seq, verifyChecksum: false)
        if seq > base { try folded.apply(header, record: record, seq: seq) }
        if !header.recordedAt.isFinite {
            problems.append(.init(seq: seq, message: "recorded at a time that is not a number"))
        } else if header.recordedAt < previousTime {
            problems.append(.init(seq: seq, message: "recorded before the record preceding it"))
        }
        if header.recordedAt.isFinite { previousTime = header.recordedAt }
        _ = try EventCodec.decodeHeader(record, seq: seq)
        guard header.kind == .put else { return }
        // A delta is checked against its base: the base matches, and every instruction lies
        // within the base's length and makes exactly the payload's. The base's bytes are checked
        // at the base, so a chain costs one pass and not a rebuild of every version.
        if header.isDelta {
            let delta = try EventCodec.delta(header, in: record, seq: seq)
            guard try txn.get(tables.schema.events, SeqKey.bytes(delta.base)) != nil else {
                usersOfMissing[delta.base, default: []].append("the delta put at seq \(seq)")
                return
            }
            let (baseHeader, _) = try tables.payloads.deltaBase(txn, delta, of: header, in: record, seq: seq)
            try EventCodec.checkDelta(header, in: record, seq: seq, baseLength: baseHeader.payloadLength)
            return
        }
        // A reference is checked against its target; the target's bytes are checked at the target.
        guard header.isReference else {
            _ = try EventCodec.payload(header, in: record, seq: seq)
            return
        }
        // A missing target is one problem, at its seq, however many puts refer to it.
        let source = try EventCodec.payloadSeq(header, in: record, seq: seq)
        if try txn.get(tables.schema.events, SeqKey.bytes(source)) == nil {
            usersOfMissing[source, default: []].append("the put at seq \(seq)")
        } else {
            _ = try tables.payloads.payloadRecord(txn, header, in: record, seq: seq)
        }
    }

    /// The stored state equals the fold of the log, row for row; the records it uses are there.
    @available(*, noasync)
    mutating func checkState() throws {
        let (rows, malformed) = try tables.state.rows(txn)
        var stored = rows.map(\.entry)
        for key in malformed {
            problems.append(.init(seq: nil, message: CacheLogError.corruptStateRow(key: String(decoding: key, as: UTF8.self)).description, fixedByRebuild: true))
        }
        var folded = folded.ordered()
        // A damaged row is one problem, reported above, not also a missing entry.
        if !malformed.isEmpty {
            let damaged = Set(malformed)
            folded.removeAll { damaged.contains(Array($0.key.utf8)) }
            stored.removeAll { damaged.contains(Array($0.key.utf8)) }
        }
        // Compaction keeps the records the live state uses; one of those gone is a missing seq too.
        for entry in folded {
            for seq in Set([entry.seq, entry.payloadSeq]) where seq <= base {
                if try txn.get(tables.schema.events, SeqKey.bytes(seq)) == nil {
                    usersOfMissing[seq, default: []].append("the live entry of key \"\(entry.key)\"")
                }
            }
        }
        // Missing seqs after the base and the zone retention trimmed are reported as gaps
        // already. Inside that zone a missing seq is history retention let go, but retention
        // never lets go a record that a stored one needs (a reference's target, a delta's base):
        // one missing there is damage, as before the base.
        for (seq, users) in usersOfMissing.sorted(by: { $0.key < $1.key }) where seq <= max(base, trimmedZone) {
            problems.append(.init(seq: seq, message: "record missing (\(users.joined(separator: ", ")) uses it)"))
        }
        if !LogState.Entry.sameEntries(stored, folded) { compareRows(stored, folded) }
    }

    /// One problem per key whose stored row differs from the fold's entry.
    private mutating func compareRows(_ stored: [LogState.Entry], _ folded: [LogState.Entry]) {
        // Keyed by bytes: canonically equivalent keys are different keys to LMDB.
        let storedByKey = Dictionary(stored.map { (Array($0.key.utf8), $0) }, uniquingKeysWith: { a, _ in a })
        let foldedByKey = Dictionary(folded.map { (Array($0.key.utf8), $0) }, uniquingKeysWith: { a, _ in a })
        let keys = Set(storedByKey.keys).union(foldedByKey.keys).sorted { $0.lexicographicallyPrecedes($1) }
        for bytes in keys {
            let have = storedByKey[bytes], want = foldedByKey[bytes]
            guard have != want || have?.key.utf8.elementsEqual(bytes) == false else { continue }
            let key = String(decoding: bytes, as: UTF8.self)
            let detailed = have?.seq == want?.seq
            problems.append(.init(
                seq: have?.seq ?? want?.seq,
                message: "state of key \"\(key)\" is \(Self.describe(have, detailed: detailed)), the log says \(Self.describe(want, detailed: detailed))",
                fixedByRebuild: !recordsDamaged))
        }
    }

    /// The key index lists every record under its key, and nothing else.
    @available(*, noasync)
    mutating func checkKeyIndex() throws {
        if try tables.keyIndex.entries.matches(txn, folded: folded.applied, base: base) { return }
        var missing: [UInt64] = []
        var extra: [(key: [UInt8], seq: UInt64?)] = []
        try tables.keyIndex.entries.compare(txn, missing: { seq, _ in missing.append(seq) }, extra: { key, value in
            extra.append((key, value.withUnsafeBytes { SeqKey.decode($0) }))
        })
        if let first = missing.first {
            let count = missing.count == 1 ? "this record" : "\(missing.count) records from this one on"
            problems.append(.init(seq: first, message: "the key index does not list \(count)", fixedByRebuild: true))
        }
        // A record already named (missing, corrupt) is one problem, not also its index entry's.
        extra.removeAll { entry in entry.seq.map { seq in problems.contains { $0.seq == seq } } ?? false }
        if let first = extra.first {
            let more = extra.count == 1 ? "" : " (and \(extra.count - 1) more entries)"
            let key = String(decoding: first.key, as: UTF8.self)
            let what: String
            switch first.seq {
            case nil: what = "the key index holds an entry under \"\(key)\" that is not a seq"
            case let seq? where try txn.get(tables.schema.events, SeqKey.bytes(seq)) == nil:
                what = "the key index lists this seq under \"\(key)\", but the log holds no such record"
            default: what = "the key index lists this record under \"\(key)\", which is not its key"
            }
            problems.append(.init(seq: first.seq, message: what + more, fixedByRebuild: true))
        }
    }

    /// `refs` lists every put that needs another record's payload bytes under that record, and
    /// nothing else.
    @available(*, noasync)
    mutating func checkRefs() throws {
        if try tables.refs.entries.matches(txn, folded: folded.sources, base: base) { return }
        var missing: [(dependent: UInt64, source: UInt64)] = []
        var extra: [(source: UInt64?, dependent: UInt64?)] = []
        try tables.refs.entries.compare(txn, missing: { seq, source in
            if let source = source.withUnsafeBytes({ SeqKey.decode($0) }) { missing.append((seq, source)) }
        }, extra: { key, value in
            extra.append((key.withUnsafeBytes { SeqKey.decode($0) }, value.withUnsafeBytes { SeqKey.decode($0) }))
        })
        if let first = missing.first {
            let what = missing.count == 1
                ? "the refs table does not list this record under seq \(first.source), whose payload it needs"
                : "the refs table does not list \(missing.count) records from this one on under the records whose payloads they need"
            problems.append(.init(seq: first.dependent, message: what, fixedByRebuild: true))
        }
        // A record already named (missing, corrupt) is one problem, not also its entry's.
        extra.removeAll { entry in entry.dependent.map { seq in problems.contains { $0.seq == seq } } ?? false }
        if let first = extra.first {
            let more = extra.count == 1 ? "" : " (and \(extra.count - 1) more entries)"
            let what: String
            switch (first.source, first.dependent) {
            case (let source?, let dependent?) where source < dependent:
                what = try txn.get(tables.schema.events, SeqKey.bytes(dependent)) == nil
                    ? "the refs table lists this seq as needing the payload of seq \(source), but the log holds no such record"
                    : "the refs table lists this record as needing the payload of seq \(source), which it does not"
            default:
                what = "the refs table holds an entry that is not an earlier seq and a later one"
            }
            problems.append(.init(seq: first.dependent, message: what + more, fixedByRebuild: true))
        }
    }

    /// The report, with a bad record that others reference reported once.
    func report() -> VerifyReport {
        var seen = Set<String>()
        return VerifyReport(
            recordsChecked: recordCount, checkpointsChecked: checkpointCount,
            problems: problems.filter { seen.insert($0.description).inserted })
    }

    /// The problem for the seqs strictly between `previous` and `next`, if there are any.
    private static func missing(after previous: UInt64, before next: UInt64) -> VerifyReport.Problem? {
        guard next > previous + 1 else { return nil }
        let first = previous + 1, last = next - 1
        return .init(seq: first, message: first == last ? "record missing" : "records missing, seq \(first) through \(last)")
    }

    /// The entry as a problem names it: by its seq, and by every field when the seqs agree, so a
    /// row that differs only in its timestamp, size or payload seq never reads as equal to the log's.
    private static func describe(_ entry: LogState.Entry?, detailed: Bool) -> String {
        guard let entry else { return "absent" }
        guard detailed else { return "live at seq \(entry.seq)" }
        return "live at seq \(entry.seq) (cached at \(entry.timestamp.timeIntervalSince1970), \(entry.bytes) bytes, payload at seq \(entry.payloadSeq))"
    }
}
