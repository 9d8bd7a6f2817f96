#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension FeedResource {
    /// The cached value of ``key`` now, then again each time it changes, whoever changes it.
    ///
    /// A change is a save of this client, of another client or of another process (the tool's
    /// cron job), a removal or an expiry, as GRDB's `ValueObservation` follows a query. `nil`
    /// while nothing is cached. Each
    /// value is ``CacheLoad/source`` `.cache`, judged fresh or not when it is delivered; a cache
    /// that only grows old delivers nothing new. Asks nothing of the remote.
    ///
    /// The log is looked at every `interval` (a change another process commits arrives within
    /// about that long): one read of its last seq, so an observer of a log where nothing happens
    /// costs next to nothing (`Tools/bench --only observe` measures it). The sequence ends when
    /// the task iterating it is cancelled, and throws when the cache cannot be read.
    ///
    /// - Parameter interval: How often the log is looked at.
    public func observe(every interval: Duration = .milliseconds(50)) -> AsyncThrowingStream<CacheLoad<Item>?, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var seen: (position: UInt64, put: UInt64?)?
                    while !Task.isCancelled {
                        if let change = try changedSince(seen) {
                            if change.put != seen?.put || seen == nil { continuation.yield(try await cachedNow()) }
                            seen = change
                        }
                        try await Task.sleep(for: interval)
                    }
                    continuation.finish()
                } catch is CancellationError {
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// How far the log has got and the seq of the key's live put, when the log moved since
    /// `seen` (or nothing was seen yet); `nil` when it did not.
    private func changedSince(_ seen: (position: UInt64, put: UInt64?)?) throws -> (position: UInt64, put: UInt64?)? {
        guard let log = try client.opener.existing() else { return seen == nil ? (0, nil) : nil }
        let position = try log.lastSeq()
        if let seen, seen.position == position { return nil }
        return (position, try log.entry(key)?.seq)
    }

    /// The cache as it is now, whatever its age; `nil` when there is none.
    private func cachedNow() async throws -> CacheLoad<Item>? {
        let now = client.clock()
        return try await localLoader(at: now, began: FetchStart()).loadIgnoringAge().map(cacheLoad)
    }
}
