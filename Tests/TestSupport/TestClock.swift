import Foundation

/// A clock the test moves by hand, injected where the code under test takes `() -> Date`.
public final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var now: Date

    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { now = start }

    public var date: Date {
        lock.lock(); defer { lock.unlock() }
        return now
    }

    public func advance(_ seconds: TimeInterval) {
        lock.lock(); defer { lock.unlock() }
        now += seconds
    }

    /// Moves the clock to `date`.
    public func set(_ date: Date) {
        lock.lock(); defer { lock.unlock() }
        now = date
    }

    /// The clock as the code under test takes it.
    public var function: @Sendable () -> Date { { self.date } }
}
