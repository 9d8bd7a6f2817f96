import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking

/// The single writer. Appends from any number of tasks queue here; one serial queue drains them,
/// putting every batch that arrived while the previous commit was syncing into the next write
/// transaction (group commit): many appends, one sync, in arrival order, none lost.
///
/// LMDB allows one write transaction at a time, bound to the thread that began it; a transaction
/// here begins and commits inside one work item of the serial queue and never meets an `await`.
final class Writer: @unchecked Sendable {
    private enum Job {
        case append(LogTables.Batch, CheckedContinuation<AppendedBatch, any Error>)
        case exclusive(() -> Void)
    }

    private let environment: Environment
    private let tables: LogTables
    private let clock: @Sendable () -> Date
    private let queue = DispatchQueue(label: "cachelog.writer")
    private let pending = Locked<(jobs: [Job], draining: Bool)>(([], false))
    /// Bounds one transaction, so a flood of appends still commits in steady steps.
    private let maxBatchesPerCommit = 4096
    /// Write transactions committed, to observe group commit (appends per commit).
    let commits = Locked(0)
    /// Jobs waiting for the writer, to observe which appends will share a commit.
    var queuedJobs: Int { pending.withLock { $0.jobs.count } }

    init(environment: Environment, tables: LogTables, clock: @escaping @Sendable () -> Date) {
        self.environment = environment
        self.tables = tables
        self.clock = clock
    }

    /// Appends `batch` in the next group commit. With a whole-batch condition that fails in that
    /// transaction, nothing is written and the append throws ``SupersededBatch``; a key-scoped one
    /// that fails leaves that key's events out.
    func append(_ batch: [EventCodec.Prepared], conditions: [AppendCondition] = []) async throws -> AppendedBatch {
        try await withCheckedThrowingContinuation { continuation in
            enqueue(.append((batch, conditions), continuation))
        }
    }

    /// Runs `work` alone on the writer's queue (compaction, rebuild): no append interleaves.
    func exclusive<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            enqueue(.exclusive { continuation.resume(with: Result { try work() }) })
        }
    }

    private func enqueue(_ job: Job) {
        let startDrain = pending.withLock { state -> Bool in
            state.jobs.append(job)
            if state.draining { return false }
            state.draining = true
            return true
        }
        if startDrain { queue.async { self.drain() } }
    }

    private func drain() {
        while true {
            let jobs = pending.withLock { state -> [Job] in
                let taken = state.jobs
                state.jobs.removeAll(keepingCapacity: true)
                if taken.isEmpty { state.draining = false }
                return taken
            }
            if jobs.isEmpty { return }
            run(jobs)
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
            }
        }
        flush()
    }

    private func commit(_ group: [(LogTables.Batch, CheckedContinuation<AppendedBatch, any Error>)]) {
        let batches = group.map(\.0)
        let now = clock()
        do {
            let ranges = try environment.write { txn in try tables.append(txn, batches: batches, now: now) }
            commits.withLock { $0 += 1 }
            for (index, entry) in group.enumerated() { entry.1.resume(with: ranges[index].mapError { $0 }) }
        } catch {
            for entry in group { entry.1.resume(throwing: error) }
        }
    }
}
