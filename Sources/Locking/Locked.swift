import Foundation

/// A value guarded by a lock, for the little shared mutable state the engine, the HTTP client and
/// the tests have. `Synchronization.Mutex` would do, but it needs macOS 15, the package supports
/// macOS 14, and a `Mutex` cannot be captured by an escaping closure, which the tests need.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) {
        self.value = value
    }

    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
