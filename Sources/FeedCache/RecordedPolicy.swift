/// The policy a cache was saved under, recorded with it, so that whoever reads the cache later (a
/// cron job, an audit, another app) can judge it alone, without knowing the app that wrote it.
public struct RecordedPolicy: Sendable, Hashable {
    /// How old the cache may get.
    public var maxAge: MaxAge
    /// The contract its payload follows (for example `films`), so that a validation that knows
    /// the contract can check that the payload still decodes; `nil` when the saver named none.
    public var contract: ContractName?

    /// Creates the record of a policy.
    public init(maxAge: MaxAge, contract: ContractName? = nil) {
        self.maxAge = maxAge
        self.contract = contract
    }
}

/// Which policy judges the age of a cache a ``LocalFeedLoader`` reads.
public enum PolicyChoice: Sendable, Hashable {
    /// The loader's own policy, whatever the cache was saved under: an app that knows its rules
    /// (and applies a changed max age to caches saved before the change).
    case ownPolicy
    /// The policy the cache was saved under (``CachedFeed/policy``), and the loader's own for a
    /// cache saved without one: a tool that judges caches written by others.
    case recordedPolicy
}
