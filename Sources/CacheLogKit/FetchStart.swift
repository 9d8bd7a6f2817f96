import Locking

/// How far the log had got when a load's request began: its last seq (0 with no database yet),
/// marked right before each request, so that a load the cache answers reads nothing more. The
/// load's save is judged by it inside the log's write transaction: a save never replaces a cache
/// whose request began later (by the log's order, which every process shares, whatever their
/// clocks say). With retries, the last request's mark stands: its answer is what is saved.
final class FetchStart: Sendable {
    private let position = Locked<UInt64?>(nil)

    /// Marks `position`, read right before a request (`CacheClient/fetchPosition()`).
    func mark(_ position: UInt64?) {
        self.position.withLock { $0 = position }
    }

    /// The last mark; `nil` before any request, or when the log could not be read then (the save
    /// reads it at the save).
    var since: UInt64? { position.withLock { $0 } }
}
