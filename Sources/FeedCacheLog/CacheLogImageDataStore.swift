import CacheLog
import FeedCache
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An `ImageDataStore` on a `CacheLog`: the data of each image URL is the live value of the
/// key `image:<url>`. Replacing an image appends `delete(replaced)` + `put` in one batch.
public struct CacheLogImageDataStore: ImageDataStore {
    /// The log the images are kept in.
    public let log: EventLog
    private let currentDate: @Sendable () -> Date

    /// Keeps image data in `log`.
    /// - Parameters:
    ///   - log: the log to append to and read from; one instance per database, shared.
    ///   - currentDate: stamps each `put` (image data carries no timestamp of its own).
    public init(log: EventLog, currentDate: @escaping @Sendable () -> Date = { Date() }) {
        self.log = log
        self.currentDate = currentDate
    }

    /// The log key that holds the data of `url`.
    public static func key(for url: URL) -> String { "image:" + url.absoluteString }

    /// Stores `data` as the live value of the key of `url`: a `put`, after `delete(replaced)`
    /// when the key held data.
    ///
    /// - Throws: `CacheLogError` when the log cannot be read or the append fails.
    public func insert(_ data: Data, for url: URL) async throws {
        let key = Self.key(for: url)
        let put = Event.put(key: key, payload: data, timestamp: currentDate())
        if try log.entry(key) != nil {
            try await log.append([.delete(key: key, reason: .replaced), put])
        } else {
            try await log.append(put)
        }
    }

    /// The live data of the key of `url`; `nil` when none.
    ///
    /// - Throws: `CacheLogError` when the log cannot be read, or the record fails its checks.
    public func retrieve(dataForURL url: URL) async throws -> Data? {
        try log.retrieve(Self.key(for: url))?.payload
    }
}
