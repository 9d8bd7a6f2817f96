#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a lock, for the little shared mutable state the engine, the HTTP client and
/// the tests have. `Synchronization.Mutex` would do, but it needs macOS 15, the package supports
/// macOS 14, and a `Mutex` cannot be captured by an escaping closure, which the tests need.
/// A pthread mutex rather than `NSLock`: Foundation's lock is not in `FoundationEssentials`, and
/// the tool links no more of Foundation than that.
public final class Locked<Value>: @unchecked Sendable {
    // On the heap: a pthread mutex must not move once initialised.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // A default mutex's initialisation cannot fail (POSIX names no error for it but ENOMEM).
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on the value while holding the lock, and gives what it returns.
    ///
    /// The lock is not reentrant: `body` must not call `withLock` on the same box.
    ///
    /// - Parameter body: the work on the value, which it may change.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws (the lock is released first), and nothing else.
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
