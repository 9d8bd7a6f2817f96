import Foundation

/// A clock whose sleeps end at once, moving its time to their deadline, and which a test moves
/// by hand (``advance(by:)``) to stand for work that takes time: waits and budgets are then exact
/// on any machine, however loaded (as swift-clocks' `ImmediateClock`).
public final class ImmediateClock: Clock, @unchecked Sendable {
    public struct Instant: InstantProtocol {
        public let offset: Duration
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let lock = NSLock()
    private var current = Instant(offset: .zero)
    private var recorded: [Duration] = []

    public init() {}

    public var now: Instant { lock.withLock { current } }
    public var minimumResolution: Duration { .zero }

    /// Every sleep asked for, in order.
    public var sleeps: [Duration] { lock.withLock { recorded } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        lock.withLock {
            recorded.append(current.duration(to: deadline))
            if current < deadline { current = deadline }
        }
    }

    /// Moves the time on by `duration`.
    public func advance(by duration: Duration) {
        lock.withLock { current = current.advanced(by: duration) }
    }
}
