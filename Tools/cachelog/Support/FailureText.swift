import CacheLog
import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation

/// One line for each way a remote load fails.
func describeRemote(_ error: any Error) -> String {
    switch error {
    case let error as RemoteLoaderError: return error.description
    case let error as NotModifiedError: return error.description
    default: return "remote failed (\(error))"
    }
}

/// One line for each way the cache has nothing usable.
func describeCache(_ error: any Error, now: Date) -> String {
    switch error {
    case CacheUnavailableError.empty:
        return "no cache"
    case CacheUnavailableError.expired(let timestamp, let maxAge):
        return "cache expired (cached \(DateParsing.string(timestamp)), \(DurationText.string(now.timeIntervalSince(timestamp))) old, max age \(maxAge))"
    case CacheUnavailableError.stampedInTheFuture(let timestamp):
        return "cache not trusted (stamped \(DateParsing.string(timestamp)), later than now: a clock set ahead saved it)"
    case let error as CacheLogError:
        return "cache unreadable (\(error))"
    case let error as InvalidCachedFeedError:
        return "cache unreadable (\(error))"
    default:
        return "cache failed (\(error))"
    }
}

/// Why saving into the cache failed, in the words of the layer that failed.
func describeSave(_ error: any Error) -> String {
    switch error {
    case let error as CacheLogError: return "\(error)"
    case let error as CLIFailure: return error.message
    default: return "\(error)"
    }
}
