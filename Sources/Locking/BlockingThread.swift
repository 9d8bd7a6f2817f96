import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A thread of its own for work that blocks (a transfer, an accept loop), outside Swift's
/// cooperative pool and outside Dispatch's worker threads: both are bounded (Dispatch to 255
/// threads), and blocking work on them once starved the queues FoundationNetworking waits on,
/// so that every task stopped. `Thread` would do, but it is Foundation's, not FoundationEssentials'.
public enum BlockingThread {
    private final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread. Should the system refuse a thread, `body` runs on a
    /// queue of its own instead (later rather than never).
    public static func start(_ body: @escaping @Sendable () -> Void) {
        let work = Unmanaged.passRetained(Work(body))
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        #if canImport(Darwin)
        var thread: pthread_t?
        let created = pthread_create(&thread, &attributes, { raw in
            Unmanaged<Work>.fromOpaque(raw).takeRetainedValue().body()
            return nil
        }, work.toOpaque())
        #else
        var thread = pthread_t()
        let created = pthread_create(&thread, &attributes, { raw in
            if let raw { Unmanaged<Work>.fromOpaque(raw).takeRetainedValue().body() }
            return nil
        }, work.toOpaque())
        #endif
        if created != 0 {
            work.release()
            DispatchQueue(label: "BlockingThread").async(execute: body)
        }
    }
}
