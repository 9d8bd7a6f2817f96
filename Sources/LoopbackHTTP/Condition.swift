#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex and a condition variable, as `NSCondition` offers them: `NSCondition` is not in
/// `FoundationEssentials`, and the `cachelog` tool (whose demo runs this server) links no more of
/// Foundation than that.
final class Condition: @unchecked Sendable {
    // On the heap: pthread objects must not move once initialised.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        // Default attributes: neither call can fail but for lack of memory.
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() {
        pthread_mutex_lock(mutex)
    }

    func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// Wakes every thread waiting on the condition.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }

    /// Waits (the lock held) until woken or `deadline` passes. `false` once the deadline passed.
    func wait(until deadline: Date) -> Bool {
        // pthread_cond_timedwait takes a time of CLOCK_REALTIME, the clock Date reads.
        let seconds = max(0, deadline.timeIntervalSince1970)
        let whole = seconds.rounded(.down)
        var time = timespec()
        time.tv_sec = .init(whole)
        // Below a second, even where the fraction rounds up: a billion nanoseconds is EINVAL.
        time.tv_nsec = .init(min(999_999_999, (seconds - whole) * 1e9))
        return pthread_cond_timedwait(condition, mutex, &time) != ETIMEDOUT
    }
}
