import Foundation

/// A gate a test opens by hand: what waits at it (a loopback server's handler, on the server's
/// own thread) goes on only once the test opens it. It replaces a delay that assumes the other
/// side got somewhere by then: the test decides when the waiting side goes on.
///
/// The wait is bounded, so that a test that fails before opening the gate never leaves a thread
/// waiting for ever; a wait that times out is reported by ``wait(timeout:)``'s result.
public final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false

    public init() {}

    /// Lets every waiter through, now and later.
    public func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks the calling thread until the gate is open, at most `timeout`; whether it opened.
    /// Never call it on a task of Swift's cooperative pool: only a thread of its own (a server's
    /// connection thread) may block.
    @discardableResult
    public func wait(timeout: TimeInterval = 120) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !isOpen {
            if !condition.wait(until: deadline) { return isOpen }
        }
        return true
    }
}
