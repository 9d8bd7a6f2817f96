import CacheLog
import Foundation

/// One past search, from its last put; `searches --format json` prints an array of them.
struct PastSearch: Encodable {
    let query, contract, key: String
    @NullWhenNil var timestamp: Date?
    let items: Int
    let fresh: Bool
    /// The server has another page (`load --more`).
    let more: Bool
    /// The put's seq: the searches are shown newest first.
    let seq: UInt64

    private enum CodingKeys: String, CodingKey { case query, contract, key, timestamp, items, fresh, more }
}
