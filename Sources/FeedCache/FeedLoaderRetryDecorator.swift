/// Retries a loader whose failure is worth another try.
///
/// With `retries` = 2 the decoratee is asked at most 3 times. Which errors are retryable is the
/// composer's decision (the `isRetryable` predicate), because only the remote layer knows its
/// error types: the intended use is to retry *invalid data* (a server that sometimes answers
/// garbage) and not *connectivity* errors (another try right away would fail the same way, and
/// the cache fallback is the better answer). Cancellation is never retried.
///
/// When the attempts run out, or an error is not retryable, the last error is rethrown unchanged.
/// Between attempts it waits as its ``RetryBackoff`` says.
public struct FeedLoaderRetryDecorator<Item: Sendable>: FeedLoader {
    private let decoratee: any FeedLoader<Item>
    private let retries: Int
    private let backoff: RetryBackoff
    private let timing: Timing
    private let isRetryable: @Sendable (any Error) -> Bool

    /// Decorates `decoratee` so that a retryable failure is retried up to `retries` times.
    /// - Parameters:
    ///   - decoratee: the loader to ask, and to ask again.
    ///   - retries: how many times to try again after the first failure; negative counts as 0.
    ///   - backoff: how long to wait before each retry (``RetryBackoff/immediate`` by default);
    ///     a retry whose wait would end past its budget is not made, and the last error stands.
    ///   - clock: what waits and what measures the budget: the continuous clock by default, so a
    ///     cancelled task stops waiting; a test gives one it moves itself.
    ///   - isRetryable: whether an error deserves another attempt.
    public init(
        decoratee: any FeedLoader<Item>,
        retries: Int,
        backoff: RetryBackoff = .immediate,
        clock: any Clock<Duration> = ContinuousClock(),
        isRetryable: @escaping @Sendable (any Error) -> Bool
    ) {
        self.decoratee = decoratee
        self.retries = max(0, retries)
        self.backoff = backoff
        timing = Timing(clock)
        self.isRetryable = isRetryable
    }

    /// Delivers the decoratee's feed, asking again after a retryable failure.
    ///
    /// - Throws: The decoratee's last error, unchanged, when the attempts or the backoff's budget
    ///   run out or the error is not retryable; `CancellationError` when the task is cancelled
    ///   between attempts or while waiting for one.
    public func loadFeed() async throws -> LoadedFeed<Item> {
        let elapsed = timing.startStopwatch()
        var retry = 0
        while true {
            do {
                return try await decoratee.loadFeed()
            } catch {
                guard retry < retries, !(error is CancellationError), isRetryable(error) else { throw error }
                try Task.checkCancellation()
                retry += 1
                let delay = backoff.delay(beforeRetry: retry)
                if let budget = backoff.budget, elapsed() + delay > budget { throw error }
                if delay > .zero { try await timing.sleep(delay) }
            }
        }
    }

    /// A clock's two uses here, with its instant type out of sight.
    private struct Timing: Sendable {
        /// Waits for a duration.
        let sleep: @Sendable (Duration) async throws -> Void
        /// Starts measuring; the closure it returns tells the time since.
        let startStopwatch: @Sendable () -> @Sendable () -> Duration

        init<C: Clock<Duration>>(_ clock: C) {
            sleep = { try await clock.sleep(for: $0) }
            startStopwatch = {
                let start = clock.now
                return { start.duration(to: clock.now) }
            }
        }
    }
}
