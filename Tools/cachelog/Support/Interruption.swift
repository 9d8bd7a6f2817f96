import ArgumentParser
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGHUP, SIGINT, SIGQUIT and SIGTERM as cancellation: `run` cancels its work when one arrives,
/// and a cancelled run ends with exit status 128 + the signal (129, 130, 131, 143), as a shell
/// reports a command the signal killed, after printing nothing. Work that finished before the
/// signal is delivered as usual: what it saved is saved, so saying so is the truth. Once a
/// command has done its work and written its output (``commandEnded()``), a signal changes
/// nothing: the exit status is the command's.
final class Interruption: @unchecked Sendable {
    // `received` is only touched on `queue`, where the signal handlers run too.
    private let queue = DispatchQueue(label: "cachelog.interruption")
    private var received: Int32?

    /// The signals a run may be interrupted by: SIGHUP, SIGINT, SIGQUIT and SIGTERM, unless the
    /// tool was started with one ignored (`nohup`, a background job), which stays ignored. Set
    /// once, at start.
    nonisolated(unsafe) private static var signals: [Int32] = []

    /// Outside `run`, these signals end the tool at once with 128 + the signal, as a shell reports
    /// it, instead of killing it: a write the tool was making is whole in the log or absent, as
    /// after any crash. SIGQUIT is among them: left to the Swift runtime, it printed a crash
    /// backtrace and the run carried on. Called once, first thing in `main`.
    static func installDefaults() {
        for number in [SIGHUP, SIGINT, SIGQUIT, SIGTERM] {
            // A handler replaces the disposition; keep one that was inherited as ignored.
            let previous = signal(number, exitWithSignal)
            if unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
                signal(number, SIG_IGN)
            } else {
                signals.append(number)
            }
        }
    }

    /// The line the handler writes before it ends the tool (nil: none, as for `replay --follow`,
    /// which an interrupt is how one ends): a C string made once, as a signal handler may only
    /// `write` what exists already.
    nonisolated(unsafe) private static var message: (pointer: UnsafeMutablePointer<CChar>, length: Int)?

    /// From now on, an interruption says `line` (one line on stderr) as it ends the tool: for a
    /// command whose interruption is a failure to report. Called before the work starts.
    static func sayWhenInterrupted(_ line: String) {
        guard message == nil, let copy = strdup(line + "\n") else { return }
        message = (copy, strlen(copy))
    }

    private static let exitWithSignal: @convention(c) (Int32) -> Void = { number in
        if let (pointer, length) = message { _ = write(2, pointer, length) }
        _exit(128 + number)
    }

    /// The command has done its work: from now on the signals are ignored, so that one arriving
    /// while the result is written or the process ends (after `"cached": true` was printed) does
    /// not turn a finished run into an interrupted one that "printed nothing". Called by `main`
    /// when the command returns or throws, and by the commands that save (`load`, `image`) as
    /// soon as their save is done, before they write their result: what is left of their run
    /// (writing it, closing the database) is no work to interrupt.
    static func commandEnded() {
        for number in signals { signal(number, SIG_IGN) }
    }

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
