#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Retention inside one write transaction: the policy in effect, the bytes in use, and one slice
/// of a pass that removes history (``RetentionPolicy``). A slice is bounded (``RetentionPass/sliceRecords``
/// records at most), so that the writer can put appends between slices and none waits long.
///
/// A key's history is its records older than its window. The last of them stays as the version
/// the history now starts from, so that the key's state folds exactly from any point of its history
/// that is left; ``Tables/trims`` records that seq. When it is an expire that judged an earlier
/// version, the key's last put before it is still live after it and stays with it. When it is an
/// expire that removed the key (or follows a delete), nothing before it is needed, unless an
/// earlier put stays for its bytes (or the compaction base's checkpoint holds the key): then the
/// records that ended the key before it (its last put or delete, and the expires after that) stay
/// too, so that the fold still ends the key there. Also
/// kept: the key's live put, and every record whose payload bytes a record that stays refers to.
/// Everything else of that history goes.
extension LogTables {
    /// The policy in effect: the newest `retention` record, or ``RetentionPolicy/default`` when
    /// the database records none (or that record cannot be read, which `verify` names).
    @available(*, noasync)
    func retentionPolicy(_ txn: Transaction) throws -> (policy: RetentionPolicy, seq: UInt64?) {
        let seq = try u64(txn, MetaKey.retentionSeq)
        guard seq > 0, let record = try txn.get(table.events, SeqKey.bytes(seq)),
              let header = try? EventCodec.decodeHeader(record, seq: seq), header.kind == .retention,
              let metadata = try? EventCodec.metadata(header, in: record, seq: seq),
              let recorded = RetentionRecord.policy(metadata)
        else { return (.default, nil) }
        return (recorded.policy, seq)
    }

    /// How far the data file has grown (``Transaction/fileExtent()``).
    @available(*, noasync)
    func fileExtent(_ txn: Transaction) throws -> Int { txn.fileExtent() }

    /// The bytes of the pages the database uses (``Transaction/bytesInUse(tables:)``): what a
    /// size limit bounds.
    @available(*, noasync)
    func bytesInUse(_ txn: Transaction) throws -> Int {
        try txn.bytesInUse(tables: [table.events, table.state, table.checkpoints, table.meta] + [table.keyIndex, table.refs, table.trims].compactMap { $0 })
    }

    /// Where the key's history starts: the seq retention recorded for it (0 when none).
    @available(*, noasync)
    func trimmedThrough(_ txn: Transaction, key: [UInt8]) throws -> UInt64 {
        guard let trims = table.trims, !key.isEmpty, let raw = try txn.get(trims, key), raw.count == 8 else { return 0 }
        return UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))
    }

    /// Every key whose history starts after `seq`: at `seq` its state is not known any more.
    @available(*, noasync)
    func keysTrimmed(after seq: UInt64, _ txn: Transaction) throws -> [String] {
        guard let trims = table.trims else { return [] }
        var keys: [String] = []
        try txn.forEachRow(trims) { row in
            guard row.value.count == 8, UInt64(bigEndian: row.value.loadUnaligned(as: UInt64.self)) > seq else { return }
            keys.append(String(decoding: row.key, as: UTF8.self))
        }
        return keys
    }

    /// One slice of `pass`: walks the log from where the pass stands, removing the history the
    /// policy lets go, and moves the pass on. Returns what it removed.
    @available(*, noasync)
    func retentionSlice(_ txn: Transaction, policy: RetentionPolicy, pass: inout RetentionPass) throws -> RetentionPass.Slice {
        var slice = RetentionPass.Slice()
        var judge = HistoryJudge(tables: self, txn: txn, policy: policy, pass: pass)
        let end = try judge.walkEnd()
        var visited = 0
        var last = pass.walkedThrough
        try txn.withCursor(table.events, from: .atLeast(SeqKey.bytes(pass.walkedThrough + 1))) { rows in
            while visited < RetentionPass.sliceRecords, let row = try rows.next(), let seq = SeqKey.decode(row.key), seq < end {
                visited += 1
                last = seq
                // Damage stays for verify to name (a flipped byte may even name another key, whose
                // history it is not); a policy's record stays as its history.
                guard let header = try? EventCodec.decodeHeader(row.value, seq: seq), header.kind != .retention
                else { continue }
                try judge.consider(seq, key: Array(EventCodec.keyBytes(header, in: row.value)))
            }
        }
        // Removed after the walk (a cursor must not see its table change under it), the newest
        // first: a delta or a reference goes before the record it needs, which then may go too,
        // so that a chain of versions outside the window goes in one slice. What ended a key is
        // decided last, once it is known which of the puts before it stay.
        var removed: [(seq: UInt64, key: [UInt8])] = []
        func remove(_ seq: UInt64, of key: [UInt8]) throws {
            guard let freed = try removeRecord(txn, seq) else { return }
            slice.removed += 1
            slice.freedBytes += freed
            removed.append((seq, key))
        }
        for (seq, key) in judge.candidates.reversed() where !judge.ended(key, at: seq) {
            try remove(seq, of: key)
        }
        for (key, ending) in judge.endings where try judge.mayRemove(ending, of: key) {
            // The key's candidates that stayed above (what ended it, and the puts before it that
            // stayed only for its bytes); removing one already gone would count it twice.
            let gone = Set(removed.lazy.filter { $0.key == key }.map(\.seq))
            for seq in judge.candidates(of: key).reversed() where !gone.contains(seq) { try remove(seq, of: key) }
        }
        if let highest = removed.map(\.seq).max(), highest > (try u64(txn, MetaKey.retentionZone)) {
            try setU64(txn, MetaKey.retentionZone, highest)
        }
        if let trims = table.trims {
            for key in Set(removed.map(\.key)) {
                guard let startsAt = judge.historyStart(of: key), try trimmedThrough(txn, key: key) < startsAt else { continue }
                try txn.put(trims, key, SeqKey.bytes(startsAt))
            }
        }
        pass.walkedThrough = last
        slice.done = visited < RetentionPass.sliceRecords
        if slice.done { pass.walkedThrough = 0 }
        return slice
    }
}

/// Where a pass of retention stands between its slices, kept in `meta`, so that the next slice
/// (in this process or another) goes on from there.
struct RetentionPass: Sendable, Equatable {
    /// Records one slice visits at most: a slice is one short write transaction.
    static let sliceRecords = 2_048

    /// The pass's clock, a stamp: every window is measured back from it, whichever slice runs.
    var now: Double
    /// The last seq walked (0: the pass starts at the first record).
    var walkedThrough: UInt64 = 0
    /// With a size limit pressing: every record up to this seq counts as history outside its
    /// window, whatever the window (0: none).
    var pressureThrough: UInt64 = 0

    /// What one slice did.
    struct Slice: Sendable, Equatable {
        var removed = 0
        var freedBytes = 0
        /// Whether the walk reached the end of what the pass may remove.
        var done = false
    }
}

/// Decides what a slice removes: one per slice, holding what it looked up. The walk names the
/// candidates (history outside its key's window that is not the version the history starts from);
/// then, per key, those whose bytes a record that stays refers to stay.
private struct HistoryJudge {
    let tables: LogTables
    let txn: Transaction
    let policy: RetentionPolicy
    let pass: RetentionPass
    /// The first seq recorded within each window, by window (seconds).
    private var windowStarts: [TimeInterval: UInt64] = [:]
    /// Per key: the window's start and the records kept as the version its history starts from.
    private var keys: [[UInt8]: KeyHistory] = [:]
    /// Records that may go, in seq order, with their keys.
    private(set) var candidates: [(seq: UInt64, key: [UInt8])] = []
    /// The compaction base, once looked up.
    private var base: UInt64?

    private struct KeyHistory {
        /// Records before this seq are outside the key's window (0: the key keeps all).
        var windowStart: UInt64
        /// The last record before the window, and, when that is an expire the key outlived, its live put.
        var kept: Set<UInt64>
        var boundary: UInt64?
        /// When the boundary is an expire that left the key absent: its last put or delete before
        /// it and the expires after that, which stay only while a put before them stays.
        var ending: [UInt64] = []
        /// The live put and the record that holds its bytes.
        var live: Set<UInt64>
    }

    init(tables: LogTables, txn: Transaction, policy: RetentionPolicy, pass: RetentionPass) {
        self.tables = tables
        self.txn = txn
        self.policy = policy
        self.pass = pass
    }

    /// The seq the walk stops at: the window's start of the shortest window (or the pressure's
    /// bound, when further): no record from there on is outside any window.
    mutating func walkEnd() throws -> UInt64 {
        let windows = ([policy.history] + policy.overrides.map { Optional($0.history) }).compactMap { $0 }
        var end = pass.pressureThrough + 1
        if let shortest = windows.min() { end = max(end, try windowStart(shortest)) }
        return end
    }

    private mutating func windowStart(_ window: TimeInterval) throws -> UInt64 {
        if let known = windowStarts[window] { return known }
        let start = try tables.firstSeq(txn, recordedAtOrAfter: Date(stamp: pass.now - window))
        windowStarts[window] = start
        return start
    }

    /// Notes record `seq` of `key` as one that may go when it is history outside the key's window
    /// and not kept as the version the history starts from or the key's live cache. Whether a
    /// kept record still needs its bytes is asked when it is removed.
    mutating func consider(_ seq: UInt64, key: [UInt8]) throws {
        let history = try self.history(of: key)
        guard seq < history.windowStart, !history.kept.contains(seq), !history.live.contains(seq),
              let boundary = history.boundary, seq < boundary
        else { return }
        candidates.append((seq, key))
    }

    /// Where the history of `key` starts once its records before it are gone: the record kept
    /// as its first version.
    func historyStart(of key: [UInt8]) -> UInt64? { keys[key]?.boundary }

    /// Whether `seq` is one of the records that ended `key` before its boundary.
    func ended(_ key: [UInt8], at seq: UInt64) -> Bool { keys[key]?.ending.contains(seq) ?? false }

    /// The keys with records that ended them before their boundary, and those records.
    var endings: [(key: [UInt8], ending: [UInt64])] {
        keys.compactMap { key, history in history.ending.isEmpty ? nil : (key, history.ending) }
    }

    /// The candidates of `key`, in seq order.
    func candidates(of key: [UInt8]) -> [UInt64] {
        candidates.compactMap { $0.key == key ? $0.seq : nil }
    }

    /// Whether the records that ended `key` before its boundary may go: only when no put before
    /// them stays stored (nor the compaction base's checkpoint, which the fold starts from, holds
    /// the key), as without them the fold of what is left would make the key live again. A put
    /// that stays only for the bytes of what ended the key, or of another such put, goes with them.
    mutating func mayRemove(_ ending: [UInt64], of key: [UInt8]) throws -> Bool {
        guard let first = ending.first, try !startsLive(key, before: first) else { return false }
        let mayGo = Set(candidates(of: key))
        guard ending.allSatisfy(mayGo.contains) else { return false }
        let puts = try storedPuts(of: key, before: first)
        let going = Set(ending).union(puts)
        for put in puts {
            guard mayGo.contains(put), try !tables.isPayloadSource(txn, put, ignoring: going) else { return false }
        }
        return true
    }

    private mutating func history(of key: [UInt8]) throws -> KeyHistory {
        if let known = keys[key] { return known }
        let live = try tables.entry(txn, key: key)
        let contract = try live.map { try tables.withRecordedPolicy($0, txn) }?.metadata["contract"]
        var windowStart: UInt64 = 0
        if let window = policy.history(forKey: String(decoding: key, as: UTF8.self), contract: contract) {
            windowStart = try self.windowStart(window)
        }
        // A size limit pressing: everything up to the pressure's bound is history, whatever the window.
        if pass.pressureThrough > 0 { windowStart = max(windowStart, pass.pressureThrough + 1) }
        var history = KeyHistory(windowStart: windowStart, kept: [], boundary: nil, live: Set([live?.seq, live?.payloadSeq].compactMap { $0 }))
        if windowStart > 1, let keyIndex = tables.keyIndex {
            try txn.withCursor(keyIndex, from: .value(key: key, value: SeqKey.bytes(windowStart - 1), atMost: true), reverse: true) { seqs in
                guard let row = try seqs.next(), let boundary = SeqKey.decode(row.value) else { return }
                // A boundary the log cannot read (missing, or damaged past its framing) says
                // nothing of what it did to the key: its history stays whole, for verify to name
                // the damage. Cut there, the fold from the compaction base could make the key live
                // at a put that went.
                guard let record = try txn.get(tables.events, SeqKey.bytes(boundary)),
                      let header = try? EventCodec.decodeHeader(record, seq: boundary, verifyChecksum: false)
                else { return }
                history.boundary = boundary
                history.kept.insert(boundary)
                // An expire removes only the version it judged: when it judged an earlier one, the
                // key's last put before it is still live after it and stays with it; when it (or
                // one before it) removed the key, or a delete did, what ended the key is noted.
                guard header.kind == .expire else { return }
                var judged: Set<UInt64> = [header.timestamp.bitPattern]
                var expires: [UInt64] = []
                while let earlier = try seqs.next(), let seq = SeqKey.decode(earlier.value) {
                    guard let previous = try txn.get(tables.events, SeqKey.bytes(seq)),
                          let previousHeader = try? EventCodec.decodeHeader(previous, seq: seq, verifyChecksum: false)
                    else { continue }
                    switch previousHeader.kind {
                    case .expire:
                        judged.insert(previousHeader.timestamp.bitPattern)
                        expires.append(seq)
                        continue
                    case .put where !judged.contains(previousHeader.timestamp.bitPattern):
                        history.kept.insert(seq)
                    case .put, .delete:
                        history.ending = [seq] + expires.reversed()
                    case .retention:
                        break
                    }
                    return
                }
            }
        }
        keys[key] = history
        return history
    }

    /// Whether the fold of the log starts with `key` live before `seq`: the compaction base's
    /// checkpoint, which stands for the history before it, holds the key.
    private mutating func startsLive(_ key: [UInt8], before seq: UInt64) throws -> Bool {
        if base == nil { base = try tables.baseSeq(txn) }
        guard let base, base > 0, seq > base, let raw = try txn.get(tables.checkpoints, SeqKey.bytes(base)) else { return false }
        do {
            return try CheckpointCodec.entry(forKey: key, in: raw, seq: base) != nil
        } catch {
            return true  // a base checkpoint that does not decode: keep what ended the key, as if it held it
        }
    }

    /// The puts of `key` still stored before `seq` whose framing reads.
    private func storedPuts(of key: [UInt8], before seq: UInt64) throws -> [UInt64] {
        guard let keyIndex = tables.keyIndex else { return [] }
        var found: [UInt64] = []
        try txn.withCursor(keyIndex, from: .value(key: key, value: SeqKey.bytes(0), atMost: false)) { seqs in
            while let row = try seqs.next(), let put = SeqKey.decode(row.value), put < seq {
                guard let record = try txn.get(tables.events, SeqKey.bytes(put)),
                      let header = try? EventCodec.decodeHeader(record, seq: put, verifyChecksum: false),
                      header.kind == .put
                else { continue }
                found.append(put)
            }
        }
        return found
    }
}

// MARK: passes

extension LogTables {
    /// How far the database may fill under a pressing size limit before retention stops
    /// trimming: a margin below the limit, so that the next saves do not start it again at once.
    static let pressureTarget = 0.9

    /// The bytes in use a pressing size limit trims to: a margin below the limit, and as much
    /// again as the file has already grown past it. LMDB never shrinks the file, and it places a
    /// large record only in a run of free pages long enough for it: when the free pages are too
    /// scattered it writes at the end of the file, which then passes the limit with fewer pages
    /// in use. Keeping more pages free gives it longer runs, and the file stops growing. Never
    /// below half the limit.
    @available(*, noasync)
    func pressureTarget(_ txn: Transaction, limit: Int) throws -> Int {
        let overrun = max(0, try fileExtent(txn) - limit)
        return max(limit / 2, Int(Double(limit) * Self.pressureTarget) - overrun)
    }

    /// Between passes, one is due when the database grew this much since the last one ended…
    static let growthBetweenPasses = 0.1
    /// …or this long passed (windows are measured in hours and days).
    static let timeBetweenPasses: Double = 3_600

    /// Whether retention should run now: a pass is under way, the size limit is passed, or the
    /// database grew or time passed enough since the last pass.
    @available(*, noasync)
    func retentionDue(_ txn: Transaction, now: Date, policy: RetentionPolicy) throws -> Bool {
        if try loadPass(txn) != nil { return true }
        let used = try bytesInUse(txn)
        let usedAfter = Double(try u64(txn, MetaKey.retentionUsedAfter))
        if let limit = policy.sizeLimit {
            if used > limit { return true }
            // The file grown past the limit: trimmed down to a target below it (``pressureTarget``),
            // unless the last pass already went as far as history lets (only live caches were left
            // above the target): then growth makes the next one due, as without a limit.
            if try fileExtent(txn) > limit, case let target = try pressureTarget(txn, limit: limit),
               used > target, usedAfter <= Double(target) {
                return true
            }
        }
        guard let last = try lastPass(txn) else { return try lastSeq(txn) > 0 }
        // A policy recorded since the last pass began: the next pass applies it.
        if try u64(txn, MetaKey.retentionSeq) != (try u64(txn, MetaKey.retentionApplied)) { return true }
        // A last pass stamped later than this clock (a what-if --now, a clock set back) would
        // otherwise hold every pass off until this clock reached its stamp, years perhaps: the
        // clocks disagree, so one runs now, and restamps.
        if now < last.startedAt { return true }
        return now.timeIntervalSince(last.startedAt) >= Self.timeBetweenPasses
            || Double(used) >= usedAfter * (1 + Self.growthBetweenPasses) + 65_536
    }

    /// One step of retention, in the caller's write transaction: a slice of the pass under way
    /// (a new one starts at `now`), eviction when history alone cannot make room, and the end of
    /// the pass. `incoming` is room to make for saves waiting to commit; `sparing` are their keys,
    /// never evicted for them. Returns whether another step is due.
    @available(*, noasync)
    func retentionStep(_ txn: Transaction, now: Date, incoming: Int = 0, sparing: Set<[UInt8]> = []) throws -> Bool {
        let (policy, _) = try retentionPolicy(txn)
        if try loadPass(txn) == nil {
            // The policy this pass applies: a newer one makes the next pass due.
            try setU64(txn, MetaKey.retentionApplied, try u64(txn, MetaKey.retentionSeq))
        }
        var pass = try loadPass(txn) ?? RetentionPass(now: now.stamp)
        var report = try loadReport(txn) ?? RetentionReport(startedAt: Date(stamp: pass.now))
        if report.finished { report = RetentionReport(startedAt: Date(stamp: pass.now)) }
        let target = try policy.sizeLimit.map { try pressureTarget(txn, limit: $0) - incoming }
        if let target, pass.pressureThrough == 0, try bytesInUse(txn) > target {
            pass.pressureThrough = try nextPressure(txn, after: 0)
        }
        let slice = try retentionSlice(txn, policy: policy, pass: &pass)
        report.removed += slice.removed
        report.freedBytes += slice.freedBytes
        var more = !slice.done
        if slice.done, let target, try bytesInUse(txn) > target {
            let last = try lastSeq(txn)
            if pass.pressureThrough < last {
                // The oldest history inside the windows goes next, a step at a time.
                pass.pressureThrough = try nextPressure(txn, after: pass.pressureThrough)
                more = true
            } else if let limit = policy.sizeLimit, try bytesInUse(txn) > limit - incoming {
                // Live caches alone over the limit itself (not only over the target below it):
                // only then does a live cache go, down to the margin below the limit, so that the
                // next saves do not evict again at once (not further for the file's overrun:
                // that is for history to give).
                let margin = Int(Double(limit) * Self.pressureTarget) - incoming
                let evicted = try evict(txn, bytes: try bytesInUse(txn) - margin, sparing: sparing, now: now)
                report.evicted += evicted
                // What the evictions left without a live entry is history now, all of it.
                pass.pressureThrough = try lastSeq(txn)
                more = evicted > 0
            }
        }
        if more {
            try savePass(txn, pass)
        } else {
            try clearPass(txn)
            report.finished = true
            try setU64(txn, MetaKey.retentionUsedAfter, UInt64(try bytesInUse(txn)))
        }
        try saveReport(txn, report)
        return more
    }

    /// The next bound of a pressing size limit: a tenth of the records left, the oldest first.
    @available(*, noasync)
    private func nextPressure(_ txn: Transaction, after bound: UInt64) throws -> UInt64 {
        let last = try lastSeq(txn)
        let first = try txn.withCursor(table.events, from: .first) { try $0.next().flatMap { SeqKey.decode($0.key) } } ?? last
        let from = max(bound, first)
        return min(last, from + max(UInt64(RetentionPass.sliceRecords), (last - from) / 10))
    }

    /// Drops live entries, the least recently saved first, until about `bytes` are freed: each
    /// gets a `delete` with reason ``Event/DeletionReason/evicted``, so that the audit says why
    /// the cache was gone. Returns how many it dropped.
    @available(*, noasync)
    private func evict(_ txn: Transaction, bytes: Int, sparing: Set<[UInt8]>, now: Date) throws -> Int {
        var candidates: [(key: [UInt8], savedAt: Double, bytes: Int)] = []
        for (key, entry) in try storedRows(txn).rows where !sparing.contains(key) {
            guard let record = try txn.get(table.events, SeqKey.bytes(entry.seq)),
                  let header = try? EventCodec.decodeHeader(record, seq: entry.seq, verifyChecksum: false)
            else { continue }
            let held = entry.payloadSeq == entry.seq ? record.count : (try txn.get(table.events, SeqKey.bytes(entry.payloadSeq))?.count ?? 0) + record.count
            candidates.append((key, header.recordedAt, held))
        }
        candidates.sort { $0.savedAt < $1.savedAt || ($0.savedAt == $1.savedAt && $0.key.lexicographicallyPrecedes($1.key)) }
        var freed = 0
        var deletes: [EventCodec.Prepared] = []
        for candidate in candidates where freed < bytes {
            let name = String(decoding: candidate.key, as: UTF8.self)
            deletes.append(try EventCodec.prepare(.delete(key: name, reason: .evicted), maxKeySize: Int.max))
            freed += candidate.bytes
        }
        guard !deletes.isEmpty else { return 0 }
        _ = try append(txn, batches: [(events: deletes, conditions: [])], now: now)
        // Counted by the state rows that are gone: a delete that left its row (a key whose bytes
        // do not survive as a string) evicted nothing, and a pass must not evict it for ever.
        var evicted = 0
        for candidate in candidates.prefix(deletes.count) where try txn.get(table.state, candidate.key) == nil { evicted += 1 }
        return evicted
    }

    // MARK: the pass in meta

    /// The pass under way: u8 2, f64 clock (a stamp), u64 walked through, u64 pressure bound; 24
    /// bytes without the version before format 4, the clock in seconds since 1970.
    @available(*, noasync)
    func loadPass(_ txn: Transaction) throws -> RetentionPass? {
        guard let raw = try txn.get(table.meta, MetaKey.retentionPass), raw.count == 24 || raw.count == 25 else { return nil }
        var reader = ByteReader(raw)
        let since1970 = raw.count == 24
        guard since1970 || reader.u8() == MetaStamp.version,
              let stored = reader.f64(), let walked = reader.u64(), let pressure = reader.u64(), stored.isFinite
        else { return nil }
        return RetentionPass(now: since1970 ? LegacyStamp.stamp(since1970: stored) : stored, walkedThrough: walked, pressureThrough: pressure)
    }

    @available(*, noasync)
    private func savePass(_ txn: Transaction, _ pass: RetentionPass) throws {
        var writer = ByteWriter(capacity: 25)
        writer.u8(MetaStamp.version)
        writer.f64(pass.now)
        writer.u64(pass.walkedThrough)
        writer.u64(pass.pressureThrough)
        try txn.put(table.meta, MetaKey.retentionPass, writer.bytes)
    }

    @available(*, noasync)
    private func clearPass(_ txn: Transaction) throws {
        try txn.delete(table.meta, MetaKey.retentionPass)
    }

    /// What the last pass did (or the one under way).
    @available(*, noasync)
    func lastPass(_ txn: Transaction) throws -> RetentionReport? {
        try loadReport(txn)
    }

    /// What the last pass did: u8 2, f64 start (a stamp), u64 removed, u64 bytes freed, u64
    /// evicted, u8 finished; 33 bytes without the version before format 4, the start in seconds
    /// since 1970.
    @available(*, noasync)
    private func loadReport(_ txn: Transaction) throws -> RetentionReport? {
        guard let raw = try txn.get(table.meta, MetaKey.retentionReport), raw.count == 33 || raw.count == 34 else { return nil }
        var reader = ByteReader(raw)
        let since1970 = raw.count == 33
        guard since1970 || reader.u8() == MetaStamp.version,
              let started = reader.f64(), let removed = reader.u64(), let freed = reader.u64(), let evicted = reader.u64(),
              let finished = reader.u8(), started.isFinite
        else { return nil }
        return RetentionReport(startedAt: Date(stamp: since1970 ? LegacyStamp.stamp(since1970: started) : started),
                               removed: Int(clamping: removed), freedBytes: Int(clamping: freed),
                               evicted: Int(clamping: evicted), finished: finished != 0)
    }

    @available(*, noasync)
    private func saveReport(_ txn: Transaction, _ report: RetentionReport) throws {
        var writer = ByteWriter(capacity: 34)
        writer.u8(MetaStamp.version)
        writer.f64(report.startedAt.stamp)
        writer.u64(UInt64(report.removed))
        writer.u64(UInt64(report.freedBytes))
        writer.u64(UInt64(report.evicted))
        writer.u8(report.finished ? 1 : 0)
        try txn.put(table.meta, MetaKey.retentionReport, writer.bytes)
    }
}
