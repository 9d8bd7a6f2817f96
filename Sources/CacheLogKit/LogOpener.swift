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
    /// Why the log was opened read-only when the client asked to write: what its saves throw.
    private let denied: Locked<CacheLogError?> = Locked(nil)
    /// The database directory, when the client opened it itself.
    let path: String?
    private let options: EventLog.Options

    /// Whether the client asked to read only (rather than the database being unwritable).
    var readOnlyByChoice: Bool { options.readOnly }

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
        opened = Locked(nil)
        try opened.withLock { log in log = try openExisting() }
    }

    /// The database at ``path`` if there is one; read-only when this user or its file system
    /// cannot write it, so that the cache still serves (its saves then throw why). A log
    /// another client (or the app) of this process has open on it is shared (`EventLog.shared`).
    private func openExisting() throws -> EventLog? {
        guard let path else { return nil }
        var reading = options
        reading.createIfMissing = false
        do {
            return try EventLog.shared(path: path, options: reading)
        } catch CacheLogError.noDatabase {
            return nil
        } catch CacheLogError.notWritable(let path, let reason) where !options.readOnly {
            reading.readOnly = true
            let log = try EventLog.shared(path: path, options: reading)
            denied.withLock { $0 = .notWritable(path: path, reason: reason) }
            return log
        }
    }

    /// A write through a log this client opened read-only because it could not write throws
    /// why (``CacheLogError/notWritable(path:reason:)``), not that the log is read-only.
    func refuseWritesByDenial(_ log: EventLog) throws {
        guard log.isReadOnly, let denial = denied.withLock({ $0 }) else { return }
        throw denial
    }

    /// The log to delete or expire in, or `nil` when there is no database yet; creates nothing.
    func existingForWriting() throws -> EventLog? {
        try refuseWritesByChoice()
        guard let log = try existing() else { return nil }
        try refuseWritesByDenial(log)
        return log
    }

    /// A client that asked to read only writes nothing, even through a log it shares with a
    /// client of this process that writes (`EventLog.shared`): that log would take the write.
    private func refuseWritesByChoice() throws {
        if options.readOnly { throw CacheLogError.readOnly }
    }

    /// The log, or `nil` when there is no database yet; creates nothing.
    func existing() throws -> EventLog? {
        try opened.withLock { log in
            if let log { return log }
            log = try openExisting()
            return log
        }
    }

    /// The log to save `keys` in, created when there is none yet (unless the client is
    /// read-only). A key no database can hold is refused before anything is created: a first
    /// save that could never land leaves the disk as it was.
    func writable(for keys: [String]) throws -> EventLog {
        try refuseWritesByChoice()
        let log: EventLog = try opened.withLock { log in
            if let log { return log }
            guard let path else { throw CacheLogError.noDatabase(path: "") }
            if let long = keys.first(where: { $0.utf8.count > EventLog.keySizeLimit }) {
                throw CacheLogError.keyTooLong(length: long.utf8.count, maximum: EventLog.keySizeLimit)
            }
            let created = try EventLog.shared(path: path, options: options)
            log = created
            return created
        }
        try refuseWritesByDenial(log)
        return log
    }
}
