// The rule of the five apps' retries: invalid data from the remote may be cured by asking
// again; a connection error is not retried, since the cache is the better answer then.

/// The retry the five apps need.
extension FeedLoaderRetryDecorator {
    /// Retries `decoratee` when the remote sent invalid data, which a retry may cure; a
    /// connection error is not retried (the cache is the better answer then).
    public init(retryingInvalidDataOf decoratee: any FeedLoader<Item>, retries: Int, backoff: RetryBackoff) {
        self.init(decoratee: decoratee, retries: retries, backoff: backoff, isRetryable: RemoteLoaderError.isInvalidData)
    }
}

/// Which remote failures a retry may cure.
extension RemoteLoaderError {
    /// Whether `error` is invalid data from the remote, which a retry may cure (a connection
    /// error is not retried: the cache is the better answer then).
    @Sendable
    public static func isInvalidData(_ error: any Error) -> Bool {
        (error as? RemoteLoaderError) == .invalidData
    }
}
