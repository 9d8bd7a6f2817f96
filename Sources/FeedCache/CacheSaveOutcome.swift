#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What became of saving a loaded feed into a cache.
///
/// ``FeedLoaderCacheDecorator`` delivers a remote feed even when saving it failed (the items are
/// still good to show), so the outcome travels with the feed: a caller that says "cached" must
/// check it first.
public enum CacheSaveOutcome: Sendable {
    /// No save was attempted: the feed came from the cache, or no cache decorator handled it.
    case notAttempted
    /// The feed was saved into the cache.
    case saved
    /// Saving the feed failed with `error`; the cache holds whatever it held before.
    case failed(any Error)
    /// The feed was not saved because the cache already holds a newer one, saved by another task
    /// or process while this feed was loading, or was removed meanwhile: a newer cache is never
    /// replaced by an older one, and a removal is not undone (``NewerCacheError`` says which).
    /// Which is newer is up to the store (an event log: which load began first, by the log's
    /// order); the stamps of clocks that disagree may put its timestamp before this feed's own.
    case superseded(by: NewerCacheError)

    /// Why the feed was not saved, when a newer cache (or a removal) stays.
    public var newerCache: NewerCacheError? { if case .superseded(let newer) = self { newer } else { nil } }

    /// Whether the feed is in the cache now.
    public var isSaved: Bool { if case .saved = self { true } else { false } }
}

extension CacheSaveOutcome: Equatable {
    /// Two failures are equal when their errors read the same (`String(reflecting:)`): an
    /// existential error has no equality of its own, and its reflection names its type and values.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.notAttempted, .notAttempted), (.saved, .saved): true
        case (.failed(let left), .failed(let right)): String(reflecting: left) == String(reflecting: right)
        case (.superseded(let left), .superseded(let right)): left == right
        default: false
        }
    }
}
