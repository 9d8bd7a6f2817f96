#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// Loads image bytes from their URL.
///
/// Only HTTP 200 with a non-empty body is valid. Errors are ``RemoteLoaderError``.
///
/// Cancellation: a load whose task is cancelled "delivers neither data nor error" — in this
/// async API that means the call throws `CancellationError` and nothing else: never the image
/// data (even if it had already arrived) and never a ``RemoteLoaderError``. The request itself is
/// cancelled too.
public struct RemoteImageDataLoader: Sendable {
    private let client: any HTTPClient
    private let logger: Logger?

    /// Creates a loader that uses `client`; `logger` receives one line per load.
    public init(client: any HTTPClient, logger: Logger? = nil) {
        self.client = client
        self.logger = logger
    }

    /// Loads the image bytes at `url`.
    ///
    /// - Throws: ``RemoteLoaderError``, or `CancellationError` when the task is cancelled.
    public func loadImageData(from url: URL) async throws -> Data {
        try await RemoteLoader(url: url, client: client, mapper: FeedImageDataMapper.map, logger: logger).load()
    }
}

/// The image data contract: HTTP 200 with at least one byte.
public enum FeedImageDataMapper {
    /// Returns `data` when the response is a 200 with a non-empty body.
    ///
    /// - Throws: ``RemoteLoaderError/invalidData`` otherwise.
    @Sendable
    public static func map(_ data: Data, from response: HTTPResponse) throws -> Data {
        guard response.statusCode == 200 else { throw RemoteLoaderError.status(response.statusCode) }
        guard !data.isEmpty else { throw RemoteLoaderError.invalidData("the body is empty") }
        return data
    }
}
