#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Retention inside one write transaction: the policy in effect, the bytes in use, and one step
/// of a pass that removes history (``RetentionPolicy``). A step is bounded
/// (``RetentionTuning/sliceRecords`` records at most), so that the writer can put appends between
/// steps and none waits long. The writer asks it whether a pass is due, runs its steps, and asks
/// it to make room before a commit that would pass the size limit.
///
/// A key's history is its records older than its window. The last of them stays as the version
/// the history now starts from, so that the key's state folds exactly from any point of its history
/// that is left; ``Tables/trims`` records that seq. When it is an expire that judged an earlier
/// version, the key's last put before it is still live after it and stays with it. When it is an
/// expire that removed the key (or follows a delete), nothing before it is needed, unless an
/// earlier put stays for its bytes (or the compaction base's checkpoint holds the key): then the
/// records that ended the key before it (its last put or delete, and the expires after that) stay
/// too, so that the fold still ends the key there. Also kept: the key's live put, and every record
/// whose payload bytes a record that stays refers to. Everything else of that history goes.
///
/// Live caches go only for live caches: over the size limit, once history is gone, the least
/// recently saved are evicted, only while the live caches themselves are over the limit, and
/// never the most recently saved; what the database needs whatever eviction does
/// (``DatabaseFloor``) is never paid for with them.
struct Retention {
    let tables: LogTables

    /// The policy in effect: the newest `retention` record, or ``RetentionPolicy/default`` when
    /// the database records none (or that record cannot be read, which `verify` names).
    @available(*, noasync)
    func policy(_ txn: Transaction) throws -> (policy: RetentionPolicy, seq: UInt64?) {
        let seq = try tables.counters.value(txn, MetaKey.retentionSeq)
        guard seq > 0, let record = try txn.get(tables.schema.events, SeqKey.bytes(seq)),
              let header = try? EventCodec.decodeHeader(record, seq: seq), header.kind == .retention,
              let metadata = try? EventCodec.metadata(header, in: record, seq: seq),
              let recorded = RetentionRecord.policy(metadata)
        else { return (.default, nil) }
        return (recorded.policy, seq)
    }

    /// Where retention stands (``RetentionState``).
    @available(*, noasync)
    func state(_ txn: Transaction) throws -> RetentionState {
        try RetentionState.load(txn, meta: tables.schema.meta)
    }

    /// The bytes of the pages the database uses (``Transaction/bytesInUse(tables:)``): what a
    /// size limit bounds.
    @available(*, noasync)
    func bytesInUse(_ txn: Transaction) throws -> Int {
        let table = tables.schema
        return try txn.bytesInUse(tables: [table.events, table.state, table.checkpoints, table.meta]
            + [table.keyIndex, table.refs, table.trims].compactMap { $0 })
    }

    /// Where the key's history starts: the seq retention recorded for it (0 when none).
    @available(*, noasync)
    func historyStart(_ txn: Transaction, key: [UInt8]) throws -> UInt64 {
        guard let trims = tables.schema.trims, !key.isEmpty, let raw = try txn.get(trims, key), raw.count == 8 else { return 0 }
        return UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))
    }

    /// Every key whose history starts after `seq`: at `seq` its state is not known any more.
    @available(*, noasync)
    func keysTrimmed(after seq: UInt64, _ txn: Transaction) throws -> [String] {
        try historyStarts(txn).compactMap { $0.value > seq ? String(decoding: $0.key, as: UTF8.self) : nil }
    }

    /// The bytes in use a pressing size limit trims to: a margin below the limit, and as much
    /// again as the file has already grown past it. LMDB never shrinks the file, and it places a
    /// large record only in a run of free pages long enough for it: when the free pages are too
    /// scattered it writes at the end of the file, which then passes the limit with fewer pages
    /// in use. Keeping more pages free gives it longer runs, and the file stops growing. Never
    /// below half the limit.
    @available(*, noasync)
    func pressureTarget(_ txn: Transaction, limit: Int) throws -> Int {
        let overrun = max(0, txn.fileExtent() - limit)
        return max(limit / 2, Int(Double(limit) * RetentionTuning.pressureTarget) - overrun)
    }

    /// Where the history of every key retention trimmed starts, by the key's bytes.
    @available(*, noasync)
    func historyStarts(_ txn: Transaction) throws -> [[UInt8]: UInt64] {
        guard let trims = tables.schema.trims else { return [:] }
        var starts: [[UInt8]: UInt64] = [:]
        try txn.forEachRow(trims) { row in
            guard row.value.count == 8 else { return }
            starts[Array(row.key)] = UInt64(bigEndian: row.value.loadUnaligned(as: UInt64.self))
        }
        return starts
    }

    // MARK: when a pass is due

    /// Whether retention should run now: a pass is under way; the size limit is passed (or the
    /// file grew past it while the bytes in use are over the target, unless the last pass went
    /// as far as history lets); a policy was recorded since the last pass began; the last pass
    /// was stamped later than `now` (the clocks disagree: one runs now, and restamps); an hour
    /// passed since it; or the database grew a tenth since it ended.
    @available(*, noasync)
    func isDue(_ txn: Transaction, now: Date, policy: RetentionPolicy) throws -> Bool {
        let state = try self.state(txn)
        if state.pass != nil { return true }
        let used = try bytesInUse(txn)
        let usedAfter = Double(state.bytesInUseAfterPass)
        if let limit = policy.sizeLimit {
            // Over the limit, unless the last pass found it cannot be met and the database has
            // not grown since: a pass after each save would find the same.
            let unmet = state.report?.unmetLimit != nil && Double(used) < usedAfter + Double(RetentionTuning.growthAllowance)
            if used > limit && !unmet { return true }
            if txn.fileExtent() > limit, case let target = try pressureTarget(txn, limit: limit), used > target, usedAfter <= Double(target) {
                return true
            }
        }
        guard let last = state.report else { return try tables.counters.lastSeq(txn) > 0 }
        if try tables.counters.value(txn, MetaKey.retentionSeq) != state.appliedPolicy { return true }
        if now < last.startedAt { return true }
        return now.timeIntervalSince(last.startedAt) >= RetentionTuning.timeBetweenPasses
            || Double(used) >= usedAfter * (1 + RetentionTuning.growthBetweenPasses) + Double(RetentionTuning.growthAllowance)
    }

    // MARK: a step of a pass

    /// One step of retention, in the caller's write transaction: a slice of the pass under way
    /// (a new one starts at `now`), eviction when history alone cannot make room, and the end of
    /// the pass. `incoming` is room to make for saves waiting to commit; `sparing` are their keys,
    /// never evicted for them. Returns whether another step is due.
    @available(*, noasync)
    func step(_ txn: Transaction, now: Date, incoming: Int = 0, sparing: Set<[UInt8]> = []) throws -> Bool {
        let (policy, _) = try self.policy(txn)
        var state = try self.state(txn)
        if state.pass == nil {
            // The policy this pass applies: a newer one makes the next pass due.
            state.appliedPolicy = try tables.counters.value(txn, MetaKey.retentionSeq)
        }
        var pass = state.pass ?? RetentionPass(now: now.stamp)
        var report = state.report ?? RetentionReport(startedAt: Date(stamp: pass.now))
        if state.pass == nil || report.finished { report = RetentionReport(startedAt: Date(stamp: pass.now)) }
        let target = try policy.sizeLimit.map { try pressureTarget(txn, limit: $0) - incoming }
        if let target, pass.pressureThrough == 0, try bytesInUse(txn) > target {
            pass.pressureThrough = try nextPressure(txn, after: 0)
        }
        let slice = try self.slice(txn, policy: policy, pass: &pass, zone: &state.zone)
        report.removed += slice.removed
        report.freedBytes += slice.freedBytes
        var more = !slice.done
        if slice.done, let target, try bytesInUse(txn) > target {
            let last = try tables.counters.lastSeq(txn)
            if pass.pressureThrough < last {
                // The oldest history inside the windows goes next, a step at a time.
                pass.pressureThrough = try nextPressure(txn, after: pass.pressureThrough)
                more = true
            } else if let limit = policy.sizeLimit, try bytesInUse(txn) > limit - incoming {
                // History is gone and the database is over the limit itself (not only over the
                // target below it). Live caches go only for live caches: only when they (with the
                // saves waiting) are over the limit themselves, the least recently saved, down to
                // the margin below it; never the most recently saved. What the floor needs beyond
                // that is never paid for with them: the limit is then unmet, and said.
                let floor = try DatabaseFloor.measure(tables, txn, bytesInUse: try bytesInUse(txn), sparing: sparing)
                report.unmetLimit = nil
                var evicted = 0
                if floor.liveBytes + incoming > limit {
                    let margin = Int(Double(limit) * RetentionTuning.pressureTarget)
                    evicted = try Eviction(tables: tables).evict(txn, floor.candidates.dropLast(), bytes: floor.liveBytes + incoming - margin,
                                                                 limit: limit, now: now)
                    report.evicted += evicted
                    // What the evictions left without a live entry is history now, all of it.
                    pass.pressureThrough = try tables.counters.lastSeq(txn)
                    more = evicted > 0
                }
                if evicted == 0 {
                    report.unmetLimit = UnmetSizeLimit(limit: limit, floorBytes: floor.bytes, liveBytes: floor.liveBytes, keys: floor.keys)
                }
            }
        }
        if more {
            state.pass = pass
        } else {
            state.pass = nil
            report.finished = true
            state.bytesInUseAfterPass = UInt64(try bytesInUse(txn))
        }
        state.report = report
        try state.save(txn, meta: tables.schema.meta)
        return more
    }

    /// The next bound of a pressing size limit: a tenth of the records left, the oldest first.
    @available(*, noasync)
    private func nextPressure(_ txn: Transaction, after bound: UInt64) throws -> UInt64 {
        let last = try tables.counters.lastSeq(txn)
        let first = try txn.withCursor(tables.schema.events, from: .first) { try $0.next().flatMap { SeqKey.decode($0.key) } } ?? last
        let from = max(bound, first)
        return min(last, from + max(UInt64(RetentionTuning.sliceRecords), (last - from) / 10))
    }

    /// One slice of `pass`: walks the log from where the pass stands, removing the history the
    /// policy lets go, and moves the pass on (and `zone`, the highest seq removed). Returns what
    /// it removed.
    @available(*, noasync)
    private func slice(_ txn: Transaction, policy: RetentionPolicy, pass: inout RetentionPass, zone: inout UInt64) throws -> RetentionPass.Slice {
        var slice = RetentionPass.Slice()
        var judge = HistoryJudge(tables: tables, txn: txn, policy: policy, pass: pass)
        let end = try judge.walkEnd()
        var visited = 0
        var last = pass.walkedThrough
        try txn.withCursor(tables.schema.events, from: .atLeast(SeqKey.bytes(pass.walkedThrough + 1))) { rows in
            while visited < RetentionTuning.sliceRecords, let row = try rows.next(), let seq = SeqKey.decode(row.key), seq < end {
                visited += 1
                last = seq
                // Damage stays for verify to name (a flipped byte may even name another key, whose
                // history it is not); a control record (the policy's) stays as its history.
                guard let header = try? EventCodec.decodeHeader(row.value, seq: seq), header.kind.isAboutAKey else { continue }
                try judge.consider(seq, key: Array(EventCodec.keyBytes(header, in: row.value)))
            }
        }
        // Removed after the walk (a cursor must not see its table change under it), the newest
        // first: a delta or a reference goes before the record it needs, which then may go too,
        // so that a chain of versions outside the window goes in one slice. What ended a key is
        // decided last, once it is known which of the puts before it stay.
        var removed: [(seq: UInt64, key: [UInt8])] = []
        func remove(_ seq: UInt64, of key: [UInt8]) throws {
            guard let freed = try tables.removeRecord(txn, seq) else { return }
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
        if let highest = removed.map(\.seq).max() { zone = max(zone, highest) }
        for key in Set(removed.map(\.key)) { try tables.keyIndex.repack(txn, key: key) }
        if let trims = tables.schema.trims {
            for key in Set(removed.map(\.key)) {
                guard let startsAt = judge.historyStart(of: key), try historyStart(txn, key: key) < startsAt else { continue }
                try txn.put(trims, key, SeqKey.bytes(startsAt))
            }
        }
        pass.walkedThrough = last
        slice.done = visited < RetentionTuning.sliceRecords
        if slice.done { pass.walkedThrough = 0 }
        return slice
    }
}
