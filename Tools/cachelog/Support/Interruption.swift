import ArgumentParser
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT and SIGTERM as cancellation: `run` cancels its work when one arrives, and a cancelled
/// run ends with exit status 128 + the signal (130, 143), as a shell reports a command the signal
/// killed, after printing nothing. Work that finished before the signal is delivered as usual:
/// what it saved is saved, so saying so is the truth.
final class Interruption: @unchecked Sendable {
    // `received` is only touched on `queue`, where the signal handlers run too.
    private let queue = DispatchQueue(label: "cachelog.interruption")
    private var received: Int32?

    /// The signals a run may be interrupted by: SIGINT and SIGTERM, unless the tool was started
    /// with one ignored (`nohup`, a background job), which stays ignored. Set once, at start.
    nonisolated(unsafe) private static var signals: [Int32] = []

    /// Outside `run`, SIGINT and SIGTERM end the tool at once with 128 + the signal, as a shell
    /// reports it, instead of killing it: a write the tool was making is whole in the log or
    /// absent, as after any crash. Called once, first thing in `main`.
    static func installDefaults() {
        for number in [SIGINT, SIGTERM] {
            // A handler replaces the disposition; keep one that was inherited as ignored.
            let previous = signal(number, exitWithSignal)
            if unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
                signal(number, SIG_IGN)
            } else {
                signals.append(number)
            }
        }
    }

    private static let exitWithSignal: @convention(c) (Int32) -> Void = { number in _exit(128 + number) }

    static func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let interruption = Interruption()
        let task = Task { try await work() }
        let sources = signals.map { number in
            // The handler would end the process before the work could stop cleanly.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: interruption.queue)
            source.setEventHandler {
                if interruption.received == nil { interruption.received = number }
                task.cancel()
            }
            source.resume()
            return source
        }
        defer {
            sources.forEach { $0.cancel() }
            for number in signals { signal(number, exitWithSignal) }
        }
        do {
            return try await task.value
        } catch {
            if let number = interruption.queue.sync(execute: { interruption.received }) {
                Terminal.message("cachelog: interrupted; nothing was delivered or cached")
                throw ExitCode(128 + number)
            }
            throw error
        }
    }
}
