#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// Loads one remote resource and maps it to `Item`. It knows nothing of caching.
///
/// Only HTTP 200 with a body the mapper accepts is valid. Transport failures become
/// ``RemoteLoaderError/connectivity``, with the reason when it is no plain outage (TLS failed, a
/// redirect was refused or looped, the proxy failed, the client cannot run here) and the client's
/// error as ``RemoteLoaderError/cause``; everything else (a body whose content encoding does not
/// decode too) becomes ``RemoteLoaderError/invalidData``.
///
/// ```swift
/// let loader = RemoteLoader(url: filmsURL, client: CurlHTTPClient(userAgent: "films/1.0"), mapper: FilmsMapper.map)
/// let films = try await loader.load()
/// ```
public struct RemoteLoader<Item: Sendable>: Sendable {
    /// Turns a response into items; throws when the body does not match the contract.
    public typealias Mapper = @Sendable (Data, HTTPResponse) throws -> Item

    /// The URL loaded by ``load()``.
    public let url: URL
    private let client: any HTTPClient
    private let mapper: Mapper
    private let logger: Logger?

    /// Creates a loader for `url`.
    ///
    /// - Parameters:
    ///   - url: The resource to load.
    ///   - client: Performs the request.
    ///   - mapper: Validates and decodes the body (for example ``FilmsMapper/map(_:from:)``).
    ///   - logger: Receives one debug line per load and one warning per failure; `nil` for silence.
    public init(url: URL, client: any HTTPClient, mapper: @escaping Mapper, logger: Logger? = nil) {
        self.url = url
        self.client = client
        self.mapper = mapper
        self.logger = logger
    }

    /// Loads and maps the resource.
    ///
    /// - Throws: ``RemoteLoaderError``, or `CancellationError` when the calling task is cancelled
    ///   before the result is delivered (a cancelled load never delivers items or a loader error).
    public func load() async throws -> Item {
        switch try await load(validators: HTTPValidators()) {
        case .modified(let item, _): return item
        // Sent no validators, so a 304 is refused below; this is what it would mean.
        case .notModified: throw RemoteLoaderError.status(304)
        }
    }

    /// Loads and maps the resource unless it is unchanged since `validators`: the request carries
    /// `If-None-Match` (the ETag, verbatim) and `If-Modified-Since` for those given.
    ///
    /// A `304 Not Modified` is ``ConditionalLoad/notModified(_:)`` only when validators were sent
    /// (otherwise it is a status other than 200, as in ``load()``); a server that ignores them
    /// answers 200, which is mapped as usual.
    ///
    /// - Throws: as ``load()``.
    public func load(validators: HTTPValidators) async throws -> ConditionalLoad<Item> {
        logger?.debug("remote load started", metadata: ["url": "\(url.absoluteString)", "conditional": "\(!validators.isEmpty)"])
        let data: Data
        let response: HTTPResponse
        do {
            (data, response) = try await client.get(from: url, headers: validators.requestHeaders)
        } catch {
            if error is CancellationError || Task.isCancelled {
                throw CancellationError()
            }
            let failure: RemoteLoaderError = switch error {
            case HTTPClientError.bodyTooLarge(let limit):
                // The server did answer; what it sent is simply unacceptable.
                .invalidData("the body is larger than the limit of \(limit) bytes")
            case HTTPClientError.transport(.cannotDecodeContentData, let message):
                // The server answered, with a body that does not decode (a truncated gzip body).
                .invalidData(message)
            case let error as HTTPClientError:
                // What is no outage says so: an untrusted certificate, a refused redirect, a failed
                // proxy or a missing libcurl is not fixed by waiting.
                switch error {
                case .unavailable(let message): RemoteLoaderError(.connectivity, reason: "not asked: \(message)", cause: error)
                case .proxyFailed: RemoteLoaderError(.connectivity, reason: "not reached: \(error)", cause: error)
                case .transport(.httpTooManyRedirects, let message):
                    RemoteLoaderError(.connectivity, reason: "sent too many redirects: \(message)", cause: error)
                default: RemoteLoaderError(.connectivity, reason: error.failure, cause: error)
                }
            default:
                .connectivity
            }
            logger?.info("remote load failed", metadata: [
                "url": "\(url.absoluteString)", "error": "\(failure)", "cause": "\(error)",
            ])
            throw failure
        }
        // Data that arrives after cancellation is dropped, never delivered.
        try Task.checkCancellation()

        if response.statusCode == 304, !validators.isEmpty {
            logger?.debug("remote not modified", metadata: ["url": "\(url.absoluteString)"])
            return .notModified(validators.updated(by: HTTPValidators(response: response)))
        }
        guard response.statusCode == 200 else {
            logger?.info("remote load failed", metadata: [
                "url": "\(url.absoluteString)", "error": "invalidData", "status": "\(response.statusCode)",
            ])
            throw RemoteLoaderError.status(response.statusCode)
        }
        do {
            let item = try mapper(data, response)
            logger?.debug("remote load succeeded", metadata: [
                "url": "\(url.absoluteString)", "bytes": "\(data.count)",
            ])
            return .modified(item, HTTPValidators(response: response))
        } catch {
            logger?.info("remote load failed", metadata: [
                "url": "\(url.absoluteString)", "error": "invalidData", "cause": "\(error)",
            ])
            // A mapper says why; anything else it throws is described.
            throw error as? RemoteLoaderError ?? .invalidData("\(error)")
        }
    }
}
