#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Thrown by a resource's load when neither the remote nor the cache delivered: it keeps both
/// causes and says them in one sentence.
///
/// `no usable data for films: remote sent invalid data: HTTP status 500, not 200; cache expired
/// (cached 2026-12-01T10:00:00Z, 8d old, max age 7d)`
public struct NoUsableDataError: Error, Sendable, CustomStringConvertible {
    /// The cache key.
    public let key: String
    /// Why the remote delivered nothing; `nil` when it was not asked (cache only).
    public let remoteError: (any Error)?
    /// Why the cache delivered nothing.
    public let cacheError: any Error
    /// The moment the cache was judged, which its age in the sentence is counted to.
    public let judgedAt: Date

    /// Both causes for `key`, the cache judged at `judgedAt`.
    public init(key: String, remoteError: (any Error)?, cacheError: any Error, judgedAt: Date) {
        self.key = key
        self.remoteError = remoteError
        self.cacheError = cacheError
        self.judgedAt = judgedAt
    }

    /// The causes of `error`, from loaders composed by `strategy`, whose primary side is the
    /// remote when it is asked first and the cache otherwise.
    init(_ error: NoUsableFeedError, key: String, strategy: CacheStrategy, judgedAt: Date) {
        let (remote, cache) = strategy == .remoteFirst
            ? (error.primaryError, error.fallbackError) : (error.fallbackError, error.primaryError)
        self.init(key: key, remoteError: remote, cacheError: cache, judgedAt: judgedAt)
    }

    /// `no usable data for KEY: <the remote's failure>; <the cache's>`.
    public var description: String {
        let causes = [remoteError.map(FailureText.remote), FailureText.cache(cacheError, now: judgedAt)].compactMap { $0 }
        return "no usable data for \(key): " + causes.joined(separator: "; ")
    }
}

/// Thrown by ``SearchResource/loadMore()`` when no further page could be added: the cached list
/// is missing or expired (search again from the first page), or the remote failed (the cached
/// list is left as it was).
public struct NoMoreResultsError: Error, Sendable, CustomStringConvertible {
    /// The search's cache key.
    public let key: String
    /// Why: the cache's error, or the remote's.
    public let cause: any Error
    /// Whether the remote failed (the cache is as it was) rather than the cache.
    public let remoteFailed: Bool
    /// The moment the cache was judged.
    public let judgedAt: Date

    /// `no more results for KEY: <why>; <what to do>`.
    public var description: String {
        remoteFailed
            ? "no more results for \(key): \(FailureText.remote(cause)); the cache is as it was"
            : "no more results for \(key): \(FailureText.cache(cause, now: judgedAt)); search again from the first page"
    }
}
