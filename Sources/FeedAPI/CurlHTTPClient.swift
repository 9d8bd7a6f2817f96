#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Locking

/// An ``HTTPClient`` on libcurl, which it loads (`dlopen`) when the first request needs it: a
/// program that links this client but does not go to the network never maps libcurl and the
/// thirty-odd libraries it brings (TLS, Kerberos, LDAP, SSH, HTTP/2…), so it starts faster.
///
/// - Only `http` and `https` URLs are requested; others throw ``HTTPClientError/unsupportedURL(_:)``.
///   Redirects (301, 302, 303, 307, 308) are followed up to 20, over http and https only and
///   never from https to plain http: such a redirect throws
///   ``HTTPClientError/redirectRefused(from:to:)``, a 21st throws
///   ``HTTPClientError/transport(code:message:)`` with `.httpTooManyRedirects`. The response is the
///   last one.
/// - Bodies larger than ``maxBodySize`` are refused without being held in memory: the transfer is
///   stopped as soon as `Content-Length` announces too much, or as soon as the bytes received
///   (or, for a gzip or deflate body, the bytes it decodes to) exceed the limit, and
///   ``HTTPClientError/bodyTooLarge(limit:)`` is thrown.
/// - Requests accept gzip and deflate; such a body is decoded, and one that does not decode or
///   stops before its end (a gzip body without its trailer) throws
///   ``HTTPClientError/transport(code:message:)`` with `.cannotDecodeContentData`.
/// - Header values are read byte for byte as ISO-8859-1 (each byte one character, U+0000 to
///   U+00FF), so an ETag holding any byte goes back in `If-None-Match` exactly as it came; a
///   header value given to ``get(from:headers:)`` is sent as ISO-8859-1 when every character fits,
///   else as UTF-8.
/// - Cancelling the calling task throws `CancellationError` at once; the transfer stops within
///   about a second.
/// - TLS peers are verified against the system's certificate store, or against ``caCertificates``
///   or ``caFile`` alone. A failure says what failed (`certificate not trusted: …`,
///   `TLS handshake failed: …`).
/// - Requests go through the ``proxy`` curl's environment variables name (``Proxy``), or one
///   given; a proxy that cannot be reached throws
///   ``HTTPClientError/proxyFailed(proxy:code:message:)``, which names it.
/// - Nothing is cached: caching is the cache layer's job, not the network's.
/// - Without libcurl (`libcurl.so.4`: Debian's and Ubuntu's package `libcurl4`) a request throws
///   ``HTTPClientError/unavailable(_:)``, which names the package to install.
///
/// ```swift
/// let client = CurlHTTPClient(userAgent: "films/1.0")
/// let films = try await RemoteLoader(url: filmsURL, client: client, mapper: FilmsMapper.map).load()
/// ```
public final class CurlHTTPClient: HTTPClient {
    /// The `User-Agent` header every request carries.
    public let userAgent: String
    /// The largest body accepted, in bytes.
    public let maxBodySize: Int
    /// How long one request may take in all, from connecting to the last byte; nil: no limit.
    public let timeout: Duration?
    /// A file of PEM certificates trusted instead of the system's store, alone (curl's
    /// `--cacert`), read by libcurl at each request; nil: the system's store, unless
    /// ``caCertificates`` is given. A file that holds no certificate fails each request as
    /// `TLS handshake failed: the trusted certificates could not be used: …`; check it first with
    /// ``PEMCertificates``, or give that instead.
    public let caFile: String?
    /// Certificates read and checked already, trusted instead of the system's store, alone; they
    /// take precedence over ``caFile``. nil: ``caFile``, else the system's store.
    public let caCertificates: PEMCertificates?
    /// Which proxy each request goes through: by default the one curl's environment variables
    /// name (``Proxy/environment``).
    public let proxy: Proxy
    /// Where libcurl is looked for, in order.
    public let libraryNames: [String]

    /// The platform's file name for libcurl 4: `libcurl.so.4` (Linux), `libcurl.4.dylib` (macOS).
    public static let defaultLibraryNames = CurlLibrary.defaultNames

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - userAgent: The `User-Agent` header, such as `cachelog/1.4.0`.
    ///   - maxBodySize: The largest body accepted, in bytes (negative values count as zero).
    ///   - timeout: How long one request may take in all; past it the request fails with
    ///     ``HTTPClientError/transport(code:message:)`` and `.timedOut`.
    ///   - caFile: A file of PEM certificates to trust instead of the system's store.
    ///   - caCertificates: Certificates to trust instead of the system's store (and of `caFile`).
    ///   - proxy: Which proxy requests go through; curl's environment variables by default.
    ///   - libraryNames: Where to find libcurl, tried in order; the default is the platform's name
    ///     for libcurl 4 (`libcurl.so.4`, `libcurl.4.dylib`). A path names one file.
    public init(
        userAgent: String, maxBodySize: Int = defaultMaxBodySize, timeout: Duration? = nil, caFile: String? = nil,
        caCertificates: PEMCertificates? = nil, proxy: Proxy = .environment, libraryNames: [String] = defaultLibraryNames
    ) {
        self.userAgent = userAgent
        self.maxBodySize = max(0, maxBodySize)
        self.timeout = timeout
        self.caFile = caFile
        self.caCertificates = caCertificates
        self.proxy = proxy
        self.libraryNames = libraryNames
    }

    /// Fetches `url` with no extra headers, as ``get(from:headers:)`` does.
    ///
    /// - Throws: As ``get(from:headers:)``.
    public func get(from url: URL) async throws -> (Data, HTTPResponse) {
        try await get(from: url, headers: [:])
    }

    /// Fetches `url` with `headers` (a header whose name or value holds a line break is not sent).
    ///
    /// A `304 Not Modified` is delivered as it came, with its empty body; every status is a
    /// response.
    ///
    /// - Throws: ``HTTPClientError``: ``HTTPClientError/unsupportedURL(_:)`` for a scheme other
    ///   than `http` and `https`, ``HTTPClientError/unavailable(_:)`` without libcurl,
    ///   ``HTTPClientError/bodyTooLarge(limit:)``, ``HTTPClientError/transport(code:message:)``
    ///   (a timeout, a TLS failure, a body that does not decode…),
    ///   ``HTTPClientError/redirectRefused(from:to:)`` and
    ///   ``HTTPClientError/proxyFailed(proxy:code:message:)``; `CancellationError` when the task
    ///   is cancelled.
    public func get(from url: URL, headers: [String: String]) async throws -> (Data, HTTPResponse) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw HTTPClientError.unsupportedURL(url)
        }
        try Task.checkCancellation()
        let library: CurlLibrary
        switch CurlLibrary.load(libraryNames) {
        case .success(let loaded): library = loaded
        case .failure(let error): throw HTTPClientError.unavailable(Self.explain(error))
        }
        let trust: CurlRequest.Trust = if let caCertificates { .certificates(caCertificates.pem) } else if let caFile { .file(caFile) } else { .system }
        let request = CurlRequest(library: library, url: url, headers: headers, options: .init(
            userAgent: userAgent, maxBodySize: maxBodySize, timeoutMilliseconds: timeout.map(Self.milliseconds) ?? 0, trust: trust, proxy: proxy))
        let call = CurlCall()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard call.begin(continuation) else { return }
                // libcurl's easy interface blocks: each transfer has a thread of its own, outside
                // Swift's cooperative pool and Dispatch's bounded workers, which blocked
                // transfers would starve.
                BlockingThread.start {
                    call.finish(request.perform())
                }
            }
        } onCancel: {
            request.cancel()
            call.finish(.cancelled)
        }
    }

    /// A duration in whole milliseconds, at least 1 (libcurl reads 0 as no limit).
    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let total = seconds.multipliedReportingOverflow(by: 1000)
        guard !total.overflow else { return Int.max }
        return max(1, Int(clamping: total.partialValue + attoseconds / 1_000_000_000_000_000))
    }

    /// Why there is no HTTP client, with what to install.
    private static func explain(_ error: CurlLoadError) -> String {
        #if canImport(Darwin)
        "libcurl could not be loaded (\(error.reason))"
        #else
        "libcurl could not be loaded (\(error.reason)); install the libcurl4 package (apt-get install libcurl4)"
        #endif
    }
}

/// The continuation of one `get`, resumed exactly once: by the transfer's end or by cancellation,
/// whichever comes first (a cancelled call does not wait for the transfer to notice).
private final class CurlCall: @unchecked Sendable {
    private let state = Locked<(continuation: CheckedContinuation<(Data, HTTPResponse), any Error>?, ended: Bool)>((nil, false))

    /// Keeps `continuation`; false (and it is resumed with `CancellationError`) when the call was
    /// cancelled before it began.
    func begin(_ continuation: CheckedContinuation<(Data, HTTPResponse), any Error>) -> Bool {
        let cancelledEarly = state.withLock { state in
            if state.ended { return true }
            state.continuation = continuation
            return false
        }
        if cancelledEarly { continuation.resume(throwing: CancellationError()) }
        return !cancelledEarly
    }

    func finish(_ outcome: CurlRequest.Outcome) {
        let continuation = state.withLock { state in
            defer { state = (nil, true) }
            return state.continuation
        }
        switch outcome {
        case let .response(data, response): continuation?.resume(returning: (data, response))
        case let .failure(error): continuation?.resume(throwing: error)
        case .cancelled: continuation?.resume(throwing: CancellationError())
        }
    }
}
