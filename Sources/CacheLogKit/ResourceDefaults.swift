/// What a contract's app does with its cache unless a resource says otherwise: how long the
/// cache serves, which side is asked first, and how often invalid data is retried.
public struct ResourceDefaults: Sendable, Hashable {
    /// How long a cache serves.
    public var maxAge: MaxAge
    /// Which side is asked first.
    public var strategy: CacheStrategy
    /// How many times invalid data from the remote is asked for again (connection errors are not
    /// retried: the cache is the better answer then).
    public var retries: Int

    /// Defaults; each parameter sets the property of its name.
    public init(maxAge: MaxAge = CachePolicy.feeds.maxAge, strategy: CacheStrategy = .remoteFirst, retries: Int = 0) {
        self.maxAge = maxAge
        self.strategy = strategy
        self.retries = max(0, retries)
    }
}
