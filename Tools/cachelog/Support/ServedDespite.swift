import CacheLogKit

/// The one line a load that the cache served still owes the reader: when the remote was not
/// asked because the HTTP client cannot run here (libcurl missing or broken), when the remote
/// sent the request somewhere it may not go (a redirect from https down to plain http, or to
/// another scheme), or when its certificate was refused (not the server asked for, or expired). The cache hides an outage, which is its job, but not a broken
/// installation or a downgrade, which someone must know of: a cron job's mail shows the line,
/// while the exit code stays 0 for the items delivered.
enum ServedDespite {
    /// `warning: KEY came from the cache: remote not asked: …`, or nil when there is nothing to say.
    static func warning(key: String, source: FeedSource, remoteFailure: (any Error)?) -> String? {
        guard source != .remote, let failure = remoteFailure as? RemoteLoaderError,
              failure.isClientUnavailable || failure.isRefusedRedirect || failure.isRefusedCertificate
        else { return nil }
        return "warning: \(EventPrinter.escaped(key)) came from the cache: \(failure)"
    }
}
