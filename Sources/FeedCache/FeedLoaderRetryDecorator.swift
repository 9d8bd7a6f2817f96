/// Retries a loader whose failure is worth another try.
///
/// With `retries` = 2 the decoratee is asked at most 3 times. Which errors are retryable is the
/// composer's decision (the `isRetryable` predicate), because only the remote layer knows its
/// error types: the intended use is to retry *invalid data* (a server that sometimes answers
/// garbage) and not *connectivity* errors (another try right away would fail the same way, and
/// the cache fallback is the better answer). Cancellation is never retried.
///
/// When the attempts run out, or an error is not retryable, the last error is rethrown unchanged.
public struct FeedLoaderRetryDecorator<Item: Sendable>: FeedLoader {
    private let decoratee: any FeedLoader<Item>
    private let retries: Int
    private let isRetryable: @Sendable (any Error) -> Bool

    /// Decorates `decoratee` so that a retryable failure is retried up to `retries` times.
    /// - Parameters:
    ///   - decoratee: the loader to ask, and to ask again.
    ///   - retries: how many times to try again after the first failure; negative counts as 0.
    ///   - isRetryable: whether an error deserves another attempt.
    public init(
        decoratee: any FeedLoader<Item>,
        retries: Int,
        isRetryable: @escaping @Sendable (any Error) -> Bool
    ) {
        self.decoratee = decoratee
        self.retries = max(0, retries)
        self.isRetryable = isRetryable
    }

    public func loadFeed() async throws -> LoadedFeed<Item> {
        var retriesLeft = retries
        while true {
            do {
                return try await decoratee.loadFeed()
            } catch {
                guard retriesLeft > 0, !(error is CancellationError), isRetryable(error) else { throw error }
                try Task.checkCancellation()
                retriesLeft -= 1
            }
        }
    }
}
