import Foundation

/// The next page's cursor, set by the remote load once its page arrived and read by the put that
/// caches it (see `CacheLogFeedStore`'s metadata).
final class PageCursor: @unchecked Sendable {
    private let lock = NSLock()
    private var next: String?
    private var loaded = false
    private let query: String

    init(query: String) { self.query = query }

    func set(_ next: String?) {
        lock.withLock {
            self.next = next
            loaded = true
        }
    }

    /// Whether a next page exists, once a page was loaded.
    var more: Bool? { lock.withLock { loaded ? next != nil : nil } }

    /// What the search's put records.
    var metadata: [String: String] {
        lock.withLock {
            var metadata = [SearchRequest.queryName: query]
            if let next { metadata[SearchRequest.nextName] = next }
            return metadata
        }
    }
}
