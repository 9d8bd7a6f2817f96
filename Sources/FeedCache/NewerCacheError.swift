#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Thrown by a ``FeedStore`` that refuses to replace a newer cache with an older one: the live
/// cache, stamped `timestamp`, was saved while the refused save's feed was loading, by a load that
/// the store counts as newer; or the cache was removed while it was loading, and the removal
/// stays.
///
/// Two tasks or processes that load the same feed at once both save it; whichever commits last
/// would otherwise win, even when its load began first. A store that can tell, where it commits,
/// which load began first refuses the older save instead; ``LocalFeedLoader`` users see it as
/// ``CacheSaveOutcome/superseded(by:)``. An event log tells by its own order (how far the log had
/// got when each load began), which every process shares, and not by the timestamps: the clocks
/// that took them may disagree, so the newer cache may well be stamped earlier.
public struct NewerCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The timestamp of the cache that stays; for a removal, when it was recorded.
    public let timestamp: Date
    /// The log's seq of the save that stays, or of the removal; nil when the store has no seqs.
    public let seq: UInt64?
    /// Whether the cache was removed while the feed was loading (then nothing is cached).
    public let removal: Bool
    /// How far the log had got when the refused save's request began.
    public let loadBegan: UInt64?
    /// How far the log had got when the kept save's own request began; nil when it recorded none
    /// (then it counts as newer for having landed after the refused load began).
    public let keptLoadBegan: UInt64?

    /// The error for a save refused because the live cache, stamped `timestamp`, is newer (or,
    /// with `removal`, because the cache was removed at `timestamp` after the load began).
    /// - Parameters:
    ///   - timestamp: the kept cache's timestamp, or when the removal was recorded.
    ///   - seq: the log's seq of the save kept, or of the removal.
    ///   - removal: the cache was removed, rather than replaced by a newer save.
    ///   - loadBegan: the log's last seq when the refused save's request began.
    ///   - keptLoadBegan: the same for the save kept, when it recorded it.
    public init(timestamp: Date, seq: UInt64? = nil, removal: Bool = false, loadBegan: UInt64? = nil, keptLoadBegan: UInt64? = nil) {
        self.timestamp = timestamp
        self.seq = seq
        self.removal = removal
        self.loadBegan = loadBegan
        self.keptLoadBegan = keptLoadBegan
    }

    /// Says why nothing was saved, as a clause (it follows "not cached: " in the tool's messages):
    /// which save was kept and why it counts as newer, or that the cache was removed.
    public var description: String {
        let stamp = TimestampText.string(timestamp)
        let began = loadBegan.map { " (at seq \($0))" } ?? ""
        if removal {
            let which = seq.map { " (seq \($0), at \(stamp))" } ?? " (at \(stamp))"
            return "the cache was removed\(which) after this load began\(began), and its answer does not bring it back"
        }
        guard let seq else { return "a newer cache (stamped \(stamp)) was saved during this load, and was kept" }
        let why = keptLoadBegan.map { "its request began at seq \($0), no earlier than this load's\(began)" }
            ?? "it landed after this load began\(began)"
        return "a newer cache (seq \(seq), stamped \(stamp)) was kept: \(why)"
    }
}

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do): the sentence, not
// "The operation could not be completed."
extension NewerCacheError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
