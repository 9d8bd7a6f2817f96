#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a ``LocalImageDataLoader`` keeps image data, one entry per URL.
///
/// A store backed by an event log keys each entry by its URL (for example `image:<url>`) and
/// records an insertion as `put`. The `ImageDataStoreSpecs` test suite describes this contract.
public protocol ImageDataStore: Sendable {
    /// Stores `data` for `url`, overriding any data stored for it before.
    func insert(_ data: Data, for url: URL) async throws

    /// Delivers the data stored for `url`, or `nil` when there is none. Has no side effects.
    func retrieve(dataForURL url: URL) async throws -> Data?
}
