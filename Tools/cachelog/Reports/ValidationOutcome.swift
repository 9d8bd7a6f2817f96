import Foundation

/// What validation did (or, in a dry run, would do) to one key; `validate --format json` prints
/// an array of them.
struct ValidationOutcome: Encodable {
    enum Kind: String, Encodable { case expired, deleted, fresh, empty, failed }

    let key: String
    let outcome: Kind
    let detail: String
    /// The judged cache's timestamp, its age in seconds at --now, the max age it was judged by
    /// (seconds) and the seq of its put; null when the key held no cache.
    @NullWhenNil var timestamp: Date? = nil
    @NullWhenNil var age: Double? = nil
    @NullWhenNil var maxAge: Double? = nil
    @NullWhenNil var seq: UInt64? = nil
    /// `true` in a dry run; left out otherwise.
    var dryRun: Bool?

    /// Whether `--quiet` prints it: a change or a problem.
    var isNews: Bool { outcome != .fresh && outcome != .empty }
}
