import Locking

/// Concurrent loads of one thing share one (Nuke's and TanStack Query's request deduplication):
/// fifty tasks asking for the films while a load of them is under way wait for that load, so
/// one request goes out and one save is made, and each caller gets its result.
///
/// A load is "the same" when everything that decides its outcome is: the resource's key, its
/// URL and settings (strategy, max age, retries), its item type. A caller that is cancelled
/// stops waiting at once; the shared load is cancelled only when no caller still waits, and
/// a caller that comes after that starts a load of its own.
final class LoadCoalescer: Sendable {
    /// What makes two loads the same one.
    ///
    /// The settings are kept as values, not as a string printed from them: interpolating an enum
    /// or a struct that does not describe itself goes through reflection and several runtime
    /// conformance lookups (each a scan of every conformance record of the binary), which cost a
    /// load served from the cache a tenth of its instructions in `cachelog load`.
    struct Identity: Hashable, Sendable {
        let key: String
        /// What is asked for: the URL, or a search's page, template and query.
        let request: [String]
        let contract: ContractName
        let strategy: CacheStrategy
        /// `nil`: each cache judged by the max age it was saved under.
        let maxAge: MaxAge?
        let retries: Int
        let backoff: RetryBackoff
        let type: ObjectIdentifier
    }

    private let flights = Locked([Identity: any Sendable]())

    /// The result of the load under way for `identity`, or of `operation`, started now.
    func load<T: Sendable>(_ identity: Identity, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let (flight, caller, isNew) = flights.withLock { flights -> (Flight<T>, Int, Bool) in
            if let existing = flights[identity] as? Flight<T>, let caller = existing.join() { return (existing, caller, false) }
            let flight = Flight<T>()
            flights[identity] = flight
            return (flight, flight.join() ?? 0, true)
        }
        if isNew {
            flight.start { [weak self] in
                // Whatever the outcome, the next caller starts afresh.
                defer { self?.land(identity, flight) }
                return try await operation()
            }
        }
        return try await flight.wait(as: caller)
    }

    /// Loads of `key` that begin from now on start their own, instead of joining one under way:
    /// after a write or a removal, a load under way answers from before it.
    func startAfresh(_ key: String) {
        flights.withLock { flights in
            for identity in flights.keys where identity.key == key { flights[identity] = nil }
        }
    }

    /// How many callers wait for loads of `key` (for the tests, which wait for overlap).
    func callers(of key: String) -> Int {
        flights.withLock { flights in
            flights.filter { $0.key.key == key }.values.reduce(0) { $0 + (($1 as? any Waitable)?.members ?? 0) }
        }
    }

    /// Whether no load is under way.
    var isIdle: Bool { flights.withLock { $0.isEmpty } }

    private func land<T>(_ identity: Identity, _ flight: Flight<T>) {
        flights.withLock { flights in
            if let current = flights[identity] as? Flight<T>, current === flight { flights[identity] = nil }
        }
    }
}

private protocol Waitable {
    var members: Int { get }
}

/// One shared load and the callers waiting for it.
private final class Flight<T: Sendable>: Sendable, Waitable {
    private struct State {
        var waiters: [Int: CheckedContinuation<T, any Error>] = [:]
        /// Callers that joined and have neither been answered nor left.
        var members = 0
        /// Callers cancelled before their continuation was registered.
        var cancelled: Set<Int> = []
        var nextID = 0
        var outcome: Result<T, any Error>?
        var task: Task<Void, Never>?
        /// Every caller left before the load ended: it is cancelled, and joins no one new.
        var abandoned = false
    }

    private let state = Locked(State())

    var members: Int { state.withLock { $0.members } }

    /// A new caller's number, or `nil` when the load was abandoned (the caller starts its own).
    func join() -> Int? {
        state.withLock { state in
            guard !state.abandoned else { return nil }
            defer { state.nextID += 1 }
            state.members += 1
            return state.nextID
        }
    }

    func start(_ operation: @escaping @Sendable () async throws -> T) {
        let body: @Sendable () async -> Void = { [state] in
            let outcome: Result<T, any Error>
            do {
                outcome = .success(try await operation())
            } catch {
                outcome = .failure(error)
            }
            let waiters = state.withLock { state in
                state.outcome = outcome
                defer { state.waiters = [:] }
                return state.waiters
            }
            for continuation in waiters.values { continuation.resume(with: outcome) }
        }
        // Started on the caller's thread, it runs there until it first suspends: a load the cache
        // answers (no request, no save) ends before `start` returns, without a hop to the global
        // executor and back (whose first use also starts Dispatch's worker and manager threads:
        // three of a short-lived process's five, by `strace` of `cachelog load`). A load that
        // suspends (a request) resumes on the global executor, where every shared load ran before.
        let task: Task<Void, Never>
        #if compiler(>=6.2)
        if #available(macOS 26, iOS 26, watchOS 26, tvOS 26, visionOS 26, *) {
            task = Task.immediate(operation: body)
        } else {
            task = Task(operation: body)
        }
        #else
        task = Task(operation: body)
        #endif
        let abandoned = state.withLock { state in
            state.task = task
            return state.abandoned
        }
        if abandoned { task.cancel() }
    }

    func wait(as caller: Int) async throws -> T {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let now: Result<T, any Error>? = state.withLock { state in
                    if let outcome = state.outcome { return outcome }
                    if state.cancelled.remove(caller) != nil { return .failure(CancellationError()) }
                    state.waiters[caller] = continuation
                    return nil
                }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            leave(caller)
        }
    }

    /// The caller was cancelled: it stops waiting now; the load stops when it was the last.
    private func leave(_ caller: Int) {
        let (continuation, abandonedTask) = state.withLock { state -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?) in
            guard state.outcome == nil else { return (nil, nil) }
            let continuation = state.waiters.removeValue(forKey: caller)
            // Cancelled before it began to wait: it finds this when it does.
            if continuation == nil { state.cancelled.insert(caller) }
            state.members -= 1
            guard state.members == 0 else { return (continuation, nil) }
            state.abandoned = true
            return (continuation, state.task)
        }
        continuation?.resume(throwing: CancellationError())
        abandonedTask?.cancel()
    }
}
