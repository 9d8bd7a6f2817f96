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

    /// How long one request may take in all, from the call to the last byte; nil: no limit
    /// beyond the configuration's. URLSession's own timeout is an idle timeout, which never fires
    /// on a server that trickles a byte at a time, and FoundationNetworking does not enforce
    /// `timeoutIntervalForResource`, so the client keeps this deadline itself.
    public let timeout: Duration?

    private let session: URLSession
    private let transfers: TransferDelegate
    /// Where requests are started and cancelled. On swift-corelibs-foundation, creating, resuming
    /// and cancelling a task each wait (`DispatchQueue.sync`) for one serial queue that every
    /// session of the process shares and that runs all of libcurl's work; that wait must not
    /// hold a thread of Swift's cooperative pool, which the caller and every other task need.
    private let control = DispatchQueue(label: "URLSessionHTTPClient.control")

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
        // Breaks the session -> delegate reference so both are freed, and cancels what a call
        // that already returned (timed out or cancelled) may have left in flight.
        session.invalidateAndCancel()
    }

    /// Fetches `url` with no extra headers, as ``get(from:headers:)`` does.
    ///
    /// - Throws: As ``get(from:headers:)``.
    public func get(from url: URL) async throws -> (Data, HTTPResponse) {
        try await get(from: url, headers: [:])
    }

    /// Fetches `url` with `headers`.
    ///
    /// A `304 Not Modified` is delivered as it came (with its empty body): the session keeps no
    /// HTTP cache that could answer for the server or swallow the 304.
    ///
    /// - Throws: `HTTPClientError`: `.unsupportedURL(_:)` for a scheme other than `http` and
    ///   `https`, `.bodyTooLarge(limit:)`, `.transport(code:message:)` (a failed transfer, or
    ///   `.timedOut` past ``timeout``) and `.nonHTTPResponse`; `CancellationError` when the task
    ///   is cancelled.
    public func get(from url: URL, headers: [String: String]) async throws -> (Data, HTTPResponse) {
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
        if let timeout, let seconds = Self.idleSeconds(timeout), seconds < session.configuration.timeoutIntervalForRequest {
            // URLSession's own (idle) timer then cannot outlive the deadline by the default 60 s.
            request.timeoutInterval = seconds
        }
        let transfer = Transfer(limit: maxBodySize)
        // The deadline runs from the call, on a Dispatch timer: neither it nor the resumption
        // of the caller waits for a thread of the cooperative pool or for URLSession's queue.
        if let timeout { transfer.startDeadline(after: timeout, cancellingOn: control) }

        // URLSession's callback API (rather than `data(from:)`) gives the delegate a say over
        // every chunk, which the size limit needs, and cancels reliably on every platform.
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.begin(continuation)
                control.async { [session, transfers, request] in
                    let task = session.dataTask(with: request)
                    transfers.register(transfer, for: task)
                    if transfer.attach(task) {
                        task.resume()
                    } else {
                        // The call ended before the task existed: it is never started, and the
                        // session forgets it once the cancel completes it.
                        task.cancel()
                    }
                }
            }
        } onCancel: {
            transfer.end(.failure(CancellationError()), cancellingOn: control)
        }
    }

    /// `timeout` rounded up to whole seconds, at least one: FoundationNetworking truncates a
    /// request's `timeoutInterval` to whole seconds, and would read 0.5 s as "time out at once".
    /// Nil for a duration too long to matter.
    private static func idleSeconds(_ timeout: Duration) -> TimeInterval? {
        let (seconds, attoseconds) = timeout.components
        guard seconds < Int64(Int32.max) else { return nil }
        return TimeInterval(max(1, seconds + (attoseconds > 0 ? 1 : 0)))
    }
}

/// The state of one request, shared by `get`, its cancellation handler, its deadline and the
/// delegate. The call ends exactly once, by whichever comes first.
private final class Transfer: @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<(Data, HTTPResponse), any Error>?
        var ended = false
        /// The outcome of a call that ended before its continuation existed.
        var pending: Result<(Data, HTTPResponse), any Error>?
        var task: URLSessionDataTask?
        var deadline: (any DispatchSourceTimer)?
        var response: URLResponse?
        var data = Data()
        var tooLarge = false
    }

    let limit: Int
    private let state = Locked(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// Ends the call with a timeout once `timeout` has passed, unless it ended before.
    func startDeadline(after timeout: Duration, cancellingOn queue: DispatchQueue) {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + .nanoseconds(Self.nanoseconds(timeout)))
        timer.setEventHandler { [weak self] in
            self?.end(.failure(HTTPClientError.transport(code: .timedOut, message: "no complete response within \(timeout)")), cancellingOn: queue)
        }
        state.withLock { $0.deadline = timer }
        timer.resume()
    }

    /// A duration in whole nanoseconds, clamped to what `DispatchTimeInterval` holds.
    private static func nanoseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let whole = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !whole.overflow else { return Int.max }
        return Int(clamping: whole.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue)
    }

    /// Keeps the continuation, or resumes it at once when the call has already ended.
    func begin(_ continuation: CheckedContinuation<(Data, HTTPResponse), any Error>) {
        let outcome = state.withLock { state -> Result<(Data, HTTPResponse), any Error>? in
            guard state.ended else {
                state.continuation = continuation
                return nil
            }
            defer { state.pending = nil }
            return state.pending
        }
        if let outcome { continuation.resume(with: outcome) }
    }

    /// Records the task. Returns `false` when the call has already ended.
    func attach(_ task: URLSessionDataTask) -> Bool {
        state.withLock { state in
            guard !state.ended else { return false }
            state.task = task
            return true
        }
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

    /// Turns the task's completion into the call's result (ignored if the call already ended).
    func complete(error: (any Error)?) {
        let result: Result<(Data, HTTPResponse), any Error> = state.withLock { state in
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
        end(result, cancellingOn: nil)
    }

    /// The response's header fields as strings (Foundation hands them over untyped).
    private static func fields(_ response: HTTPURLResponse) -> [String: String] {
        var fields: [String: String] = [:]
        for case let (name as String, value as String) in response.allHeaderFields { fields[name] = value }
        return fields
    }

    /// Ends the call with `outcome` unless it ended before: the caller is resumed first, then
    /// the task, if any, is cancelled on `queue` (nil: the task has completed by itself). The
    /// caller never waits for URLSession to act on the cancel, which can take long when the
    /// session's queue is busy.
    func end(_ outcome: Result<(Data, HTTPResponse), any Error>, cancellingOn queue: DispatchQueue?) {
        let ended = state.withLock { state -> (CheckedContinuation<(Data, HTTPResponse), any Error>?, URLSessionDataTask?, (any DispatchSourceTimer)?)? in
            guard !state.ended else { return nil }
            state.ended = true
            if state.continuation == nil { state.pending = outcome }
            defer { state.continuation = nil; state.task = nil; state.deadline = nil; state.data = Data() }
            return (state.continuation, state.task, state.deadline)
        }
        guard let (continuation, task, deadline) = ended else { return }
        deadline?.cancel()
        continuation?.resume(with: outcome)
        if let task, let queue {
            queue.async { task.cancel() }
        }
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
