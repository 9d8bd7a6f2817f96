import FeedAPI
import FeedCache
import Foundation
import Logging

/// A cached payload that is not the JSON array ``FeedPayloadCoder/exactJSON`` writes.
struct NotAJSONArrayError: Error, CustomStringConvertible {
    var description: String { "the cached payload is not a JSON array" }
}

extension FeedPayloadCoder where Item == JSONValue {
    /// Stores the values as one JSON array of their exact text, and reads it back unchanged.
    static var exactJSON: Self {
        Self(
            encode: { Data(JSONValue.array($0)) },
            decode: { payload in
                guard let scanned = JSONScanner.scan(Array(payload)), let elements = scanned.elements else {
                    throw NotAJSONArrayError()
                }
                return elements.map { JSONValue(text: Array(scanned.compact[$0])) }
            })
    }
}

extension LocalFeedLoader where Item == JSONValue {
    /// A loader for the `json` contract's cache: what `Codable` items get from the library's
    /// own initializer, with the coder that keeps the values exact.
    init(store: any FeedStore, currentDate: @escaping @Sendable () -> Date, policy: CachePolicy, logger: Logger?) {
        self.init(store: store, currentDate: currentDate, policy: policy, coder: .exactJSON, logger: logger)
    }
}
