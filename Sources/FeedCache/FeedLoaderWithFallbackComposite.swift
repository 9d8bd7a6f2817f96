/// Loads from a primary loader and, when it fails, from a fallback (typically: remote, then cache).
///
/// - If the primary delivers, its feed is delivered.
/// - If the primary throws, the fallback is tried; its feed is delivered with its own
///   ``FeedSource``, so the caller can tell a remote feed from a cached one, and with the
///   primary's error (``LoadedFeed/primaryFailure``), so it can say why the remote was not the
///   answer (a fallback's feed that carries a failure of its own keeps that one).
/// - If both throw, ``NoUsableFeedError`` carries both errors.
/// - Cancellation is not a failure: a `CancellationError` from the primary, or a cancelled
///   task, is rethrown without trying the fallback; one from the fallback is rethrown as is.
public struct FeedLoaderWithFallbackComposite<Item: Sendable>: FeedLoader {
    private let primary: any FeedLoader<Item>
    private let fallback: any FeedLoader<Item>

    /// Composes `primary` with `fallback`.
    public init(primary: any FeedLoader<Item>, fallback: any FeedLoader<Item>) {
        self.primary = primary
        self.fallback = fallback
    }

    /// Delivers the primary's feed, or the fallback's when the primary fails.
    ///
    /// - Throws: ``NoUsableFeedError`` with both errors when both loaders fail;
    ///   `CancellationError` when the task is cancelled, or either loader throws it.
    public func loadFeed() async throws -> LoadedFeed<Item> {
        let primaryError: any Error
        do {
            return try await primary.loadFeed()
        } catch {
            primaryError = error
        }
        if primaryError is CancellationError { throw primaryError }
        try Task.checkCancellation()
        do {
            // A fallback that fell back itself keeps its own first failure: the nearer cause.
            let feed = try await fallback.loadFeed()
            return feed.primaryFailure == nil ? feed.delivered(after: primaryError) : feed
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw NoUsableFeedError(primaryError: primaryError, fallbackError: error)
        }
    }
}
