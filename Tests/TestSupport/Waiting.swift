import Foundation

/// The error `body` throws, or `nil` when it returns.
public func caughtError<T>(_ body: () async throws -> T) async -> (any Error)? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// Polls `condition` every 10 ms until it holds; false when `timeout` passes first.
public func eventually(timeout: Duration = .seconds(5), _ condition: () -> Bool) async throws -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
