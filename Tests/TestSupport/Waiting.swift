import Foundation

/// The error `body` throws, or `nil` when it returns.
public func caughtError<T>(_ body: () async throws -> T) async -> (any Error)? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// Polls `condition` every 10 ms until it holds; false when `timeout` passes first. The timeout
/// only catches what never happens: an event that comes returns at once, however loaded the machine.
public func eventually(timeout: Duration = .seconds(300), _ condition: () -> Bool) async throws -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// When a job handed to Swift's cooperative pool `delay` from now first runs: the earliest that
/// a task whose wait ends then (a timeout's, say) can go on, on this machine at this moment.
///
/// A Dispatch timer hands the job over, from outside the pool, so only the pool's backlog delays
/// it; with the whole suite running in parallel on a busy machine, that backlog is seconds deep.
public struct PoolTurn: Sendable {
    private let stream: AsyncStream<ContinuousClock.Instant>

    /// Schedules the job, at `priority` (the caller's, as a resumed caller's job would have).
    public init(after delay: Duration, priority: TaskPriority? = Task.currentPriority) {
        let (stream, continuation) = AsyncStream.makeStream(of: ContinuousClock.Instant.self)
        self.stream = stream
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delay / .milliseconds(1)))) {
            Task(priority: priority) {
                continuation.yield(ContinuousClock.now)
                continuation.finish()
            }
        }
    }

    /// When the job ran (waits for it).
    public var instant: ContinuousClock.Instant? {
        get async {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
    }
}
