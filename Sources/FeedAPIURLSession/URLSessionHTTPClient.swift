import FeedAPI
import Foundation
import Locking
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An `HTTPClient` on `URLSession`, for Linux (FoundationNetworking) and Apple platforms.
///
/// A library of its own: on Linux, FoundationNetworking brings libcurl and some thirty shared
/// libraries that the dynamic loader maps at every start of a program that links it, whether or
/// not it goes to the network.
///
/// - Only `http` and `https` URLs are requested; others throw `HTTPClientError.unsupportedURL(_:)`.
/// - Bodies larger than ``maxBodySize`` are refused without being held in memory: the transfer is
///   cancelled as soon as `Content-Length` announces too much, or as soon as the bytes received
///   exceed the limit, and `HTTPClientError.bodyTooLarge(limit:)` is thrown.
/// - Cancelling the calling task cancels the underlying request; the call throws `CancellationError`.
/// - HTTP caching is bypassed: caching is the cache layer's job, not the network's.
public final class URLSessionHTTPClient: HTTPClient {
    /// The largest body accepted, in bytes.
    public let maxBodySize: Int

    /// How long one request may take in all, from connecting to the last byte; nil: no limit
    /// beyond the configuration's. URLSession's own idle timeout never fires on a server that
    /// trickles a byte at a time, and FoundationNetworking does not enforce
    /// `timeoutIntervalForResource`, so the client keeps this deadline itself.
    public let timeout: Duration?

    private let session: URLSession
    private let transfers: TransferDelegate

    /// Creates a client with its own session.
    ///
    /// - Parameters:
    ///   - configuration: The session configuration (timeouts, headers). Defaults to `.ephemeral`.
    ///   - maxBodySize: The largest body accepted, in bytes (negative values count as zero).
    ///   - timeout: How long one request may take in all; past it the request is cancelled and
    ///     `get(from:)` throws `HTTPClientError.transport(code:message:)` with `.timedOut`.
    public init(configuration: URLSessionConfiguration = .ephemeral, maxBodySize: Int = defaultMaxBodySize, timeout: Duration? = nil) {
        self.maxBodySize = max(0, maxBodySize)
        self.timeout = timeout
        transfers = TransferDelegate()
        // No HTTP cache: caching is CacheLog's job, and a response served from an HTTP cache
        // would hide the remote's real state from the fallback logic.
        let configuration = configuration.copy() as? URLSessionConfiguration ?? configuration
        configuration.urlCache = nil
        // The session keeps its delegate alive until it is invalidated (see deinit).
        session = URLSession(configuration: configuration, delegate: transfers, delegateQueue: nil)
    }

    deinit {
        // Every get() holds `self`, so no request is in flight here; this breaks the
        // session -> delegate reference so both are freed.
        session.invalidateAndCancel()
    }

    public func get(from url: URL) async throws -> (Data, HTTPResponse) {
        try await get(from: url, headers: [:])
    }

    /// Fetches `url` with `headers`. A `304 Not Modified` is delivered as it came (with its empty
    /// body): the session keeps no HTTP cache that could answer for the server or swallow the 304.
    public func get(from url: URL, headers: [String: String]) async throws -> (Data, HTTPResponse) {
        guard let timeout else { return try await transfer(url, headers: headers) }
        // The transfer and the deadline race; whichever ends first cancels the other.
        return try await withThrowingTaskGroup(of: (Data, HTTPResponse).self) { group in
            group.addTask { try await self.transfer(url, headers: headers) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw HTTPClientError.transport(code: .timedOut, message: "no complete response within \(timeout)")
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw CancellationError() }
            return first
        }
    }

    private func transfer(_ url: URL, headers: [String: String]) async throws -> (Data, HTTPResponse) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw HTTPClientError.unsupportedURL(url)
        }
        try Task.checkCancellation()

        var request = URLRequest(url: url)
        request.httpMethod = "GET"
        // Never answered from a local cache: a conditional request must reach the server, and
        // its 304 must reach the caller, who holds the cached copy.
        request.cachePolicy = .reloadIgnoringLocalCacheData
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let transfer = Transfer(limit: maxBodySize)

        // URLSession's callback API (rather than `data(from:)`) gives the delegate a say over
        // every chunk, which the size limit needs, and cancels reliably on every platform.
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request)
                transfer.continuation = continuation
                transfers.register(transfer, for: task)
                if transfer.attach(task) {
                    task.resume()
                } else {
                    // Cancelled before the task existed: it is never started.
                    transfers.remove(task)
                    transfer.finish(.failure(CancellationError()))
                }
            }
        } onCancel: {
            transfer.cancel()
        }
    }
}

/// The state of one request, shared by `get`, its cancellation handler and the delegate.
private final class Transfer: @unchecked Sendable {
    private struct State {
        var task: URLSessionDataTask?
        var continuation: CheckedContinuation<(Data, HTTPResponse), any Error>?
        var response: URLResponse?
        var data = Data()
        var cancelled = false
        var tooLarge = false
    }

    let limit: Int
    private let state = Locked(State())

    init(limit: Int) {
        self.limit = limit
    }

    var continuation: CheckedContinuation<(Data, HTTPResponse), any Error>? {
        get { state.withLock { $0.continuation } }
        set { state.withLock { $0.continuation = newValue } }
    }

    /// Records the task. Returns `false` when the caller was already cancelled.
    func attach(_ task: URLSessionDataTask) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.task = task
            return true
        }
    }

    /// The Swift task was cancelled: cancel the request (if it exists yet), and end the call now.
    /// On swift-corelibs-foundation the cancelled task's completion can come seconds later on a
    /// busy machine; the caller (a timeout among them) must not wait for it.
    func cancel() {
        let task = state.withLock { state -> URLSessionDataTask? in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
        finish(.failure(CancellationError()))
    }

    /// Accepts the response unless its announced length is over the limit.
    func accept(_ response: URLResponse) -> Bool {
        state.withLock { state in
            state.response = response
            if response.expectedContentLength > Int64(limit) {
                state.tooLarge = true
                return false
            }
            return true
        }
    }

    /// Appends a chunk unless the total would exceed the limit, in which case what was
    /// received is dropped at once and `false` is returned.
    func append(_ chunk: Data) -> Bool {
        state.withLock { state in
            guard !state.tooLarge else { return false }
            if state.data.count + chunk.count > limit {
                state.tooLarge = true
                state.data = Data()
                return false
            }
            state.data.append(chunk)
            return true
        }
    }

    /// Turns the task's completion into the call's result.
    func complete(error: (any Error)?) {
        let result: Result<(Data, HTTPResponse), any Error> = state.withLock { state in
            if state.cancelled {
                return .failure(CancellationError())
            }
            if state.tooLarge {
                return .failure(HTTPClientError.bodyTooLarge(limit: limit))
            }
            if let error {
                let urlError = error as? URLError
                return .failure(HTTPClientError.transport(
                    code: urlError.map { .init(rawValue: $0.code.rawValue) } ?? .unknown,
                    message: urlError?.localizedDescription ?? String(describing: error)
                ))
            }
            guard let response = state.response as? HTTPURLResponse, let url = response.url else {
                return .failure(HTTPClientError.nonHTTPResponse)
            }
            return .success((state.data, HTTPResponse(url: url, statusCode: response.statusCode, headerFields: Self.fields(response))))
        }
        finish(result)
    }

    /// The response's header fields as strings (Foundation hands them over untyped).
    private static func fields(_ response: HTTPURLResponse) -> [String: String] {
        var fields: [String: String] = [:]
        for case let (name as String, value as String) in response.allHeaderFields { fields[name] = value }
        return fields
    }

    /// Resumes the continuation exactly once.
    func finish(_ result: Result<(Data, HTTPResponse), any Error>) {
        let continuation = state.withLock { state in
            defer { state.continuation = nil; state.data = Data() }
            return state.continuation
        }
        continuation?.resume(with: result)
    }
}

/// The session delegate: routes each callback to the ``Transfer`` of its task.
private final class TransferDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let transfers = Locked([Int: Transfer]())

    func register(_ transfer: Transfer, for task: URLSessionTask) {
        transfers.withLock { $0[task.taskIdentifier] = transfer }
    }

    func remove(_ task: URLSessionTask) {
        _ = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    }

    private func transfer(for task: URLSessionTask) -> Transfer? {
        transfers.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let transfer = transfer(for: dataTask), transfer.accept(response) else {
            completionHandler(.cancel)
            // swift-corelibs-foundation ignores the `.cancel` disposition and keeps receiving.
            Self.cancelSoon(dataTask)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let transfer = transfer(for: dataTask) else { return }
        if !transfer.append(data) {
            Self.cancelSoon(dataTask)
        }
    }

    /// Cancels `task` outside the delegate callback. On swift-corelibs-foundation a cancel issued
    /// from inside a data callback takes effect far later (megabytes later on loopback) than one
    /// issued from another queue. Bytes that still arrive are dropped by ``Transfer/append(_:)``.
    private static func cancelSoon(_ task: URLSessionDataTask) {
        DispatchQueue.global().async { task.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let transfer = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        transfer?.complete(error: error)
    }
}
