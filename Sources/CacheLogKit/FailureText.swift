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
        case CacheUnavailableError.gone(let ending):
            "no cache: " + Self.ending(ending)
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

    /// How the last cache ended, as the audit says it.
    static func ending(_ ending: CacheEnding) -> String {
        switch ending {
        case .evicted(let at, let limit):
            "evicted at \(TimestampText.string(at)): the database passed its size limit" + (limit.map { " of \(RetentionPolicy.sizeText($0))" } ?? "")
        case .removed(let at):
            "removed at \(TimestampText.string(at))"
        case .expired(let at, let timestamp, let maxAge):
            "expired by validation at \(TimestampText.string(at)) (cached \(TimestampText.string(timestamp)), max age \(MaxAge(seconds: maxAge).map(String.init(describing:)) ?? "\(maxAge)s"))"
        case .unreadable(let at):
            "deleted at \(TimestampText.string(at)) as unreadable"
        }
    }
}
