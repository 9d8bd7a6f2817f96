import Dispatch

/// Runs a command's async work on the main thread, where the async `main` already runs.
///
/// A command's `run()` is a nonisolated async function, so Swift would run it on the global
/// concurrent executor: Dispatch starts worker threads for it (four at each start, by `strace`)
/// and every `await` crosses threads, which costs a start of `cachelog state` more than its work
/// (`perf record`: thread creation and handoffs about 10 % of the process). With this executor
/// preferred, the command, its child tasks and what they resume after a suspension (an LMDB
/// writer, libcurl's thread) run on the main queue, which the async `main` is already draining.
@available(macOS 15, *)
final class MainQueueExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DispatchQueue.main.async { job.runSynchronously(on: executor) }
    }
}
