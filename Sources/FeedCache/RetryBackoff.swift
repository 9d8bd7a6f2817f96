/// How long a ``FeedLoaderRetryDecorator`` waits before each retry.
///
/// A server that answered garbage a moment ago is more likely to answer well a little later than
/// at once, and a client that retries at once adds load when the server can least take it. The
/// waits double from ``initial`` up to ``maximum``; with a ``budget`` no retry starts whose wait
/// would end past it (counted from the first attempt), so retries never outlast what the caller
/// allowed the whole load (the tool's `--timeout`).
public struct RetryBackoff: Sendable, Hashable {
    /// The wait before the first retry.
    public var initial: Duration
    /// The longest wait.
    public var maximum: Duration
    /// The time from the first attempt after which no retry starts; `nil` for no bound.
    public var budget: Duration?

    /// Waits doubling from `initial` up to `maximum`, within `budget` when given.
    public init(initial: Duration, maximum: Duration, budget: Duration? = nil) {
        self.initial = max(.zero, initial)
        self.maximum = max(self.initial, maximum)
        self.budget = budget
    }

    /// No wait: each retry starts at once.
    public static let immediate = RetryBackoff(initial: .zero, maximum: .zero)

    /// Half a second, then 1 s, 2 s, 4 s, 8 s and 8 s again: within `budget` when given.
    public static func exponential(within budget: Duration? = nil) -> RetryBackoff {
        RetryBackoff(initial: .milliseconds(500), maximum: .seconds(8), budget: budget)
    }

    /// The wait before retry number `retry` (1 for the first retry).
    public func delay(beforeRetry retry: Int) -> Duration {
        var delay = initial
        for _ in 1..<max(1, retry) {
            guard delay < maximum else { break }
            delay *= 2
        }
        return min(delay, maximum)
    }
}
