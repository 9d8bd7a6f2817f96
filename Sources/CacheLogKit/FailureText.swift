#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One line for each way the package fails, shared by the errors' descriptions: what the tool
/// prints after `cachelog:` is what an app's log says.
enum FailureText {
    /// Why the remote gave nothing usable.
    static func remote(_ error: any Error) -> String {
        switch error {
        case let error as RemoteLoaderError: error.description
        case let error as NotModifiedError: error.description
        default: "remote failed (\(error))"
        }
    }

    /// Why the cache had nothing usable, judged at `now`.
    static func cache(_ error: any Error, now: Date) -> String {
        switch error {
        case CacheUnavailableError.empty:
            "no cache"
        case CacheUnavailableError.expired(let timestamp, let maxAge):
            "cache expired (cached \(TimestampText.string(timestamp)), \(DurationText.string(now.timeIntervalSince(timestamp))) old, max age \(maxAge))"
        case CacheUnavailableError.stampedInTheFuture(let timestamp):
            "cache not trusted (stamped \(TimestampText.string(timestamp)), later than now: a clock set ahead saved it)"
        case let error as CacheLogError:
            "cache unreadable (\(error))"
        case let error as InvalidCachedFeedError:
            "cache unreadable (\(error))"
        default:
            "cache failed (\(error))"
        }
    }
}
