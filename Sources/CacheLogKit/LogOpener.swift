#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking

/// The client's log, opened when it is first needed and created only by a write.
///
/// A client opened on a directory with no database yet creates nothing until something is saved:
/// a load that fails (no network, no cache) or a validation leaves the disk as it was.
final class LogOpener: Sendable {
    private let opened: Locked<EventLog?>
    /// The database directory, when the client opened it itself.
    let path: String?
    private let options: EventLog.Options

    /// A log already open.
    init(log: EventLog) {
        opened = Locked(log)
        path = log.path
        options = EventLog.Options()
    }

    /// The database at `path`, opened now when it exists (so that a damaged or foreign directory
    /// is an error at once), else when it is first written.
    init(path: String, options: EventLog.Options) throws {
        self.path = path
        self.options = options
        var reading = options
        reading.createIfMissing = false
        do {
            opened = Locked(try EventLog(path: path, options: reading))
        } catch CacheLogError.noDatabase {
            opened = Locked(nil)
        }
    }

    /// The log, or `nil` when there is no database yet; creates nothing.
    func existing() throws -> EventLog? {
        try opened.withLock { log in
            if let log { return log }
            guard let path else { return nil }
            var reading = options
            reading.createIfMissing = false
            do {
                log = try EventLog(path: path, options: reading)
            } catch CacheLogError.noDatabase {
                return nil
            }
            return log
        }
    }

    /// The log, created when there is none yet (unless the client is read-only).
    func writable() throws -> EventLog {
        try opened.withLock { log in
            if let log { return log }
            guard let path else { throw CacheLogError.noDatabase(path: "") }
            let created = try EventLog(path: path, options: options)
            log = created
            return created
        }
    }
}
