import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// The single writer. Appends from any number of tasks queue here; one serial queue drains them,
/// putting every batch that arrived while the previous commit was syncing into the next write
/// transaction (group commit): many appends, one sync, in arrival order, none lost.
///
/// LMDB allows one write transaction at a time, bound to the thread that began it; a transaction
/// here begins and commits inside one work item of the serial queue and never meets an `await`.
///
/// It also keeps the database within its retention policy (``RetentionPolicy``): after a commit
/// that makes a pass due, one slice at a time, each its own short transaction queued behind the
/// appends waiting then, so that appends go first and no save waits long; and, before a commit
/// that would pass the size limit, as many slices as make room for it.
final class Writer: @unchecked Sendable {
    private enum Job {
        case append(LogTables.Batch, CheckedContinuation<AppendedBatch, any Error>)
        case exclusive(() -> Void)
        case retention
    }

    private let environment: Environment
    private let tables: LogTables
    /// Keeps the database within its policy (``Retention``).
    private let retention: Retention
    private let clock: @Sendable () -> Date
    private let queue = DispatchQueue(label: "cachelog.writer")
    /// `incoming`: appends on their way (``expectAppend()``), being validated and compressed on
    /// their tasks.
    private let pending = Locked<(jobs: [Job], draining: Bool, retentionQueued: Bool, incoming: Int)>(([], false, false, 0))
    /// How long a commit about to start waits at most for the appends on their way.
    let gatherWindow: Duration
    /// Whether this writer applies the retention policy as it goes (``EventLog/Options/automaticRetention``).
    private let appliesRetention: Bool
    /// Bounds one transaction, so a flood of appends still commits in steady steps.
    private let maxBatchesPerCommit = 4096
    /// Write transactions committed, to observe group commit (appends per commit).
    let commits = Locked(0)
    /// Jobs waiting for the writer, to observe which appends will share a commit.
    var queuedJobs: Int { pending.withLock { $0.jobs.count } }
    /// Appends announced and not yet handed over (``expectAppend()``).
    var incomingAppends: Int { pending.withLock { $0.incoming } }

    init(environment: Environment, tables: LogTables, clock: @escaping @Sendable () -> Date, appliesRetention: Bool = true,
         gatherWindow: Duration = .milliseconds(1)) {
        self.environment = environment
        self.tables = tables
        retention = Retention(tables: tables)
        self.clock = clock
        self.appliesRetention = appliesRetention
        self.gatherWindow = gatherWindow
    }

    /// Appends `batch` in the next group commit. With a whole-batch condition that fails in that
    /// transaction, nothing is written and the append throws ``SupersededBatch``; a key-scoped one
    /// that fails leaves that key's events out. `expected`: announced by ``expectAppend()``.
    func append(_ batch: [EventCodec.Prepared], conditions: [AppendCondition] = [], expected: Bool = false) async throws -> AppendedBatch {
        try await withCheckedThrowingContinuation { continuation in
            enqueue(.append((batch, conditions), continuation), arriving: expected)
        }
    }

    /// Announces an append on its way: its task is validating and compressing it, and will hand
    /// it to ``append(_:conditions:expected:)`` with `expected`, or call ``cancelExpectedAppend()``.
    /// A commit that starts meanwhile waits for it (``gatherWindow`` at most), so that saves made
    /// at once share one commit, and its two flushes, instead of the first paying two alone and
    /// the others two more right after it.
    func expectAppend() {
        pending.withLock { $0.incoming += 1 }
    }

    /// The announced append will not come (its preparation failed).
    func cancelExpectedAppend() {
        pending.withLock { $0.incoming -= 1 }
    }

    /// Runs `work` alone on the writer's queue (compaction, rebuild): no append interleaves.
    func exclusive<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            enqueue(.exclusive { continuation.resume(with: Result { try work() }) })
        }
    }

    /// Runs retention steps until a pass ends (``Retention/step(_:now:incoming:sparing:)``),
    /// alone on the writer's queue: for `EventLog.applyRetention()`. A pass under way measures its
    /// windows from the clock it started with, and judged what it walked under the policy of its
    /// time: it is finished first, then a pass at `now` applies the policy in effect as of now.
    /// With `onlyIfDue`, only when this writer applies retention and a pass is due (as after a
    /// commit), and only that pass. Returns every pass it ran in one report, with a pass that
    /// ended between the call and its turn on the queue; nil when it ran none.
    func applyRetention(onlyIfDue: Bool = false) async throws -> RetentionReport? {
        guard !onlyIfDue || appliesRetention else { return nil }
        // Whether a pass is due is a read, which needs no writer: a process whose saves made none
        // due (most) learns so without queueing here, which would start the queue's thread for
        // nothing. A pass that a commit still queued makes due, the writer starts after that commit.
        if onlyIfDue, try !isRetentionDue(at: clock()) { return nil }
        let before = try lastReport()
        return try await exclusive { [self] in
            let now = clock()
            let start = try environment.read(.newest) { txn in try retention.state(txn) }
            var passes: [RetentionReport] = []
            if start.pass == nil, let ended = start.report, ended.finished, ended != before { passes.append(ended) }
            if onlyIfDue, try !isRetentionDue(at: now) { return RetentionReport(combining: passes) }
            // A pass under way (another process's, cut by a kill) counts from where it stood: the
            // report says what this call removed and evicted.
            let resumed = try runPass(at: now)
            passes.append(start.pass != nil ? start.report.map(resumed.since) ?? resumed : resumed)
            if start.pass != nil && !onlyIfDue { passes.append(try runPass(at: now)) }
            return RetentionReport(combining: passes)
        }
    }

    /// Steps until the pass under way (or a new one at `now`) ends; returns its report.
    private func runPass(at now: Date) throws -> RetentionReport {
        while try environment.write({ txn in try retention.step(txn, now: now) }) {}
        return try lastReport() ?? RetentionReport(startedAt: now, finished: true)
    }

    /// The report of the pass under way, or of the last one that ended.
    private func lastReport() throws -> RetentionReport? {
        try environment.read(.newest) { txn in try retention.state(txn).report }
    }

    private func isRetentionDue(at now: Date) throws -> Bool {
        try environment.read(.newest) { txn in try retention.isDue(txn, now: now, policy: try retention.policy(txn).policy) }
    }

    private func enqueue(_ job: Job, arriving: Bool = false) {
        let startDrain = pending.withLock { state -> Bool in
            if arriving { state.incoming -= 1 }
            if case .retention = job {
                // One slice queued at a time: it queues the next itself when the pass goes on.
                guard !state.retentionQueued else { return false }
                state.retentionQueued = true
            }
            state.jobs.append(job)
            if state.draining { return false }
            state.draining = true
            return true
        }
        if startDrain { queue.async { self.drain() } }
    }

    private func drain() {
        while true {
            var jobs = pending.withLock { state -> [Job] in
                let taken = state.jobs
                state.jobs.removeAll(keepingCapacity: true)
                if taken.isEmpty { state.draining = false }
                return taken
            }
            if jobs.isEmpty { return }
            if jobs.contains(where: { if case .append = $0 { true } else { false } }) { jobs += gather() }
            run(jobs)
        }
    }

    /// The jobs that arrive while appends announced by ``expectAppend()`` are on their way, until
    /// none is or ``gatherWindow`` has passed. The writer's own thread waits here (never a thread
    /// of the cooperative pool), in steps of a few tens of microseconds: a save takes about a
    /// millisecond to commit, a 45 KB feed about a tenth of that to compress.
    private func gather() -> [Job] {
        let clock = ContinuousClock()
        let deadline = clock.now + gatherWindow
        var gathered: [Job] = []
        while true {
            let (taken, incoming) = pending.withLock { state -> ([Job], Int) in
                let taken = state.jobs
                state.jobs.removeAll(keepingCapacity: true)
                return (taken, state.incoming)
            }
            gathered += taken
            if incoming <= 0 || clock.now >= deadline { return gathered }
            usleep(20)
        }
    }

    private func run(_ jobs: [Job]) {
        var group: [(LogTables.Batch, CheckedContinuation<AppendedBatch, any Error>)] = []
        func flush() {
            if !group.isEmpty { commit(group) }
            group.removeAll(keepingCapacity: true)
        }
        for job in jobs {
            switch job {
            case .append(let batch, let continuation):
                group.append((batch, continuation))
                if group.count == maxBatchesPerCommit { flush() }
            case .exclusive(let work):
                flush()
                work()
            case .retention:
                flush()
                pending.withLock { $0.retentionQueued = false }
                runRetentionSlice()
            }
        }
        flush()
    }

    /// One slice of the retention pass under way, in its own write transaction; the next is
    /// queued behind whatever arrived meanwhile. Queued when a commit made a pass due, it may run
    /// after an apply ended that pass: with none under way it starts one only if one is still due.
    /// A failure leaves the pass where it stood in `meta`, for the next commit to take up:
    /// retention never fails a save.
    func runRetentionSlice() {
        let now = clock()
        let more = try? environment.write { txn -> Bool in
            if try retention.state(txn).pass == nil, try !retention.isDue(txn, now: now, policy: retention.policy(txn).policy) {
                return false
            }
            return try retention.step(txn, now: now)
        }
        if more == true { enqueue(.retention) }
    }

    private func commit(_ group: [(LogTables.Batch, CheckedContinuation<AppendedBatch, any Error>)]) {
        var group = group
        let now = clock()
        if appliesRetention { group = makeRoom(for: group, now: now) }
        guard !group.isEmpty else { return }
        let batches = group.map(\.0)
        do {
            let (ranges, due) = try environment.write { txn in
                let ranges = try tables.append(txn, batches: batches, now: now)
                let due = try appliesRetention && retention.isDue(txn, now: now, policy: try retention.policy(txn).policy)
                return (ranges, due)
            }
            commits.withLock { $0 += 1 }
            for (index, entry) in group.enumerated() { entry.1.resume(with: ranges[index].mapError { $0 }) }
            if due { enqueue(.retention) }
        } catch {
            for entry in group { entry.1.resume(throwing: error) }
        }
    }

    /// Before a commit that would pass the size limit: refuses each batch that cannot fit in the
    /// limit by itself (it would empty the cache and still not fit: ``RetentionTuning/minimumFloor``), then
    /// trims history and evicts until the rest fits below the limit's margin. Returns the batches
    /// that go on to commit.
    private func makeRoom(for group: [(LogTables.Batch, CheckedContinuation<AppendedBatch, any Error>)], now: Date)
        -> [(LogTables.Batch, CheckedContinuation<AppendedBatch, any Error>)] {
        guard let (limit, used) = try? environment.read(.newest, { txn -> (Int, Int)? in
            guard let limit = try retention.policy(txn).policy.sizeLimit else { return nil }
            return (limit, try retention.bytesInUse(txn))
        }) else { return group }
        var kept: [(LogTables.Batch, CheckedContinuation<AppendedBatch, any Error>)] = []
        var incoming = 0
        for entry in group {
            let bytes = entry.0.events.reduce(0) { $0 + Self.estimatedBytes($1) }
            if bytes + RetentionTuning.minimumFloor > limit {
                entry.1.resume(throwing: CacheLogError.exceedsSizeLimit(bytes: bytes + RetentionTuning.minimumFloor, limit: limit))
            } else {
                kept.append(entry)
                incoming += bytes
            }
        }
        guard used + incoming > limit else { return kept }
        let sparing = Set(kept.flatMap { $0.0.events.map(\.key) })
        // Each step is its own short transaction; the batches wait for the room they need.
        while (try? environment.write({ txn in try retention.step(txn, now: now, incoming: incoming, sparing: sparing) })) == true {}
        return kept
    }

    /// About what a record takes in the database (``RecordFootprint``).
    static func estimatedBytes(_ event: EventCodec.Prepared) -> Int {
        RecordFootprint.bytes(record: EventCodec.headerSize + event.key.count + event.body.count + event.metadata.count + EventCodec.checksumSize,
                              key: event.key.count)
    }
}
