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
import Locking

/// The logs open in this process, by the real path of their directory. Weak: a log ends when
/// its last user lets it go, as it does when nothing shares it.
enum SharedLogs {
    /// Held while one `shared` call looks for a log and opens one, so that two never both open.
    /// Its value is not used. Not `Locked(())`: an empty value has no storage of its own, and
    /// ThreadSanitizer saw each call's access to it at the lock object's own address, which other
    /// threads read before they take the lock, and reported a race on every run of the client's
    /// concurrent specs.
    static let opening = Locked(false)
    private static let logs = Locked([String: WeakLog]())

    private struct WeakLog: Sendable {
        weak var log: EventLog?
    }

    static func log(at canonical: String) -> EventLog? {
        logs.withLock { $0[canonical]?.log }
    }

    static func register(_ log: EventLog, at canonical: String) {
        logs.withLock { logs in
            logs = logs.filter { $0.value.log != nil }
            logs[canonical] = WeakLog(log: log)
        }
    }

    /// The log this process has open on `path`, whoever opened it; else the log opened now with
    /// `options` (``EventLog/shared(path:options:)``).
    static func log(path: String, options: EventLog.Options) throws -> EventLog {
        try opening.withLock { _ in
            // A log that has just been let go may still be closing (its environment ends after
            // its last read); its directory is free within moments.
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(5)
            while true {
                if let open = log(at: OpenPaths.canonical(path)) {
                    // Opened read-only by choice (its directory is writable): it cannot take this
                    // caller's writes, which would fail one by one, so the caller hears it now.
                    if open.isReadOnly && !options.readOnly && FileManager.default.isWritableFile(atPath: path) {
                        throw CacheLogError.alreadyOpen(path: path)
                    }
                    return open
                }
                do {
                    return try EventLog(path: path, options: options)
                } catch CacheLogError.alreadyOpen where clock.now < deadline {
                    usleep(1000)
                }
            }
        }
    }
}
