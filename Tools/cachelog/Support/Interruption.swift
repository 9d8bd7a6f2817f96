import ArgumentParser
import Dispatch
import Foundation

/// SIGINT and SIGTERM as cancellation: `run` cancels its work when one arrives, and a cancelled
/// run ends with exit status 128 + the signal (130, 143), as a shell reports a command the signal
/// killed, after printing nothing. Work that finished before the signal is delivered as usual:
/// what it saved is saved, so saying so is the truth.
final class Interruption: @unchecked Sendable {
    // `received` is only touched on `queue`, where the signal handlers run too.
    private let queue = DispatchQueue(label: "cachelog.interruption")
    private var received: Int32?

    static func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let interruption = Interruption()
        let task = Task { try await work() }
        let sources = [SIGINT, SIGTERM].map { number in
            // The default action would end the process before the work could stop cleanly.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: interruption.queue)
            source.setEventHandler {
                if interruption.received == nil { interruption.received = number }
                task.cancel()
            }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
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
