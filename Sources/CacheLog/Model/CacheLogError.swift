#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Everything that can go wrong in the engine, each with a message a person can act on.
///
/// C error codes from liblmdb and zlib arrive typed (``StorageErrorCode``,
/// ``CompressionErrorCode``); no C type leaks out of the module.
public enum CacheLogError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The database path exists but is a file, not a directory.
    case notADirectory(path: String)
    /// The database cannot be written, and why (a read-only file system, file modes).
    case notWritable(path: String, reason: WriteDenial)
    /// This user may not read `path`: the data file (another user's database, mode 0600), or the
    /// database directory itself (another user's, mode 0700).
    case notReadable(path: String)
    /// A read-only open that may not write the lock file reads a copy of the database, as
    /// writers cannot see it; another process committed twice or more during each copy it made,
    /// so no copy was whole. Nothing was read: reading again usually succeeds.
    case overlappedWrites(path: String)
    /// A read-only open found no database at the path.
    case noDatabase(path: String)
    /// The path holds something that is not a CacheLog database.
    case notADatabase(path: String, detail: String)
    /// The database was written by a newer CacheLog; it can be opened read-only at most.
    case newerFormat(found: UInt32, supported: UInt32)
    /// The same database directory is already open in this process (LMDB forbids a second open).
    case alreadyOpen(path: String)
    /// A write was attempted on a database opened read-only.
    case readOnly
    /// An append needs at least one event.
    case emptyBatch
    /// Keys must not be empty.
    case emptyKey
    /// Keys are stored as LMDB keys, whose size is limited.
    case keyTooLong(length: Int, maximum: Int)
    /// A payload over 4 GiB cannot be framed.
    case payloadTooLarge(length: Int)
    /// A put's metadata does not fit its framing (see ``Event/put(key:payload:timestamp:maxAge:metadata:)``).
    case invalidMetadata(detail: String)
    /// A retention policy that cannot be recorded (``RetentionPolicy/problem``).
    case invalidRetention(detail: String)
    /// One save that does not fit in the database's size limit (``RetentionPolicy/sizeLimit``)
    /// beside the pages every database keeps: refused, rather than empty the cache and still not
    /// fit. `bytes` counts both. Nothing was written.
    case exceedsSizeLimit(bytes: Int, limit: Int)
    /// The data file is shorter than the pages LMDB's meta says it uses: it was cut short (a
    /// copy that did not finish, a truncation). Nothing in it is read; restore it from a backup.
    case truncated(path: String, size: Int, expected: Int?)
    /// A stored record failed its checksum, its framing or its inflate. Never returned as data.
    case corruptRecord(seq: UInt64, detail: String)
    /// A row of the stored state could not be decoded; ``EventLog/rebuildState()`` restores it.
    case corruptStateRow(key: String)
    /// A counter in the database's `meta` table (last seq, compaction base) is impossible.
    /// ``EventLog/rebuildState()`` restores the counters from the log.
    case corruptMeta(detail: String)
    /// A checkpoint of the state could not be decoded.
    case corruptCheckpoint(seq: UInt64, detail: String)
    /// The requested point lies in history that `compact(before:)` removed.
    case historyCompacted(firstAvailable: UInt64)
    /// Retention removed this key's history before `firstAvailable` (``RetentionPolicy``).
    case historyTrimmed(key: String, firstAvailable: UInt64)
    /// The payload could not be compressed (out of memory), with zlib's number for why.
    case compressionFailed(code: CompressionErrorCode)
    /// The disk (or the process's file-size limit) had no room for the write: nothing was
    /// written, and the database is as it was before the append.
    case storageFull(operation: String, code: StorageErrorCode)
    /// liblmdb returned an error for an operation.
    case lmdb(operation: String, code: StorageErrorCode)
    /// The database path is one another user could have arranged: a link they planted, a link to
    /// nothing, or (for writing) files they own or may write. Nothing was opened or created.
    case untrustedPath(path: String, detail: String)
    /// A page of the data file is not what LMDB wrote, found before LMDB followed it (it has
    /// no checksums, and would have crashed the process): nothing was read past it.
    case damaged(path: String, page: Int, detail: String)

    /// Whether the data file itself is damaged (pages LMDB cannot follow, a file cut short):
    /// what ``DamageRecovery/moveAside`` moves aside. Damage to records, the state or the
    /// counters is not: `rebuild` repairs it, and `verify` names it.
    public var isDamage: Bool {
        switch self {
        case .damaged, .truncated: true
        case .lmdb(_, let code): code.isDamagedStructure
        default: false
        }
    }

    /// The damage in a few words, for the record a new database keeps of it.
    var damageSummary: String {
        switch self {
        case .damaged(_, let page, let detail): "page \(page) \(detail)"
        case .truncated(_, let size, _): "data.mdb was cut short to \(size) bytes"
        default: description
        }
    }

    /// One line for a person: what is wrong and, where there is one, what to do about it.
    public var description: String {
        switch self {
        case .notADirectory(let path):
            return "\(path) is a file, not a database directory"
        case .notWritable(let path, let reason):
            return "\(path) is not writable: \(reason)"
        case .notReadable(let path):
            return "\(path) is not readable by this user; reading needs read access to it"
        case .overlappedWrites(let path):
            return "\(path) was busy: another process kept writing while it was copied to be read without its lock file (not writable here), so nothing was read; try again"
        case .noDatabase(let path):
            return "no CacheLog database at \(path)"
        case .notADatabase(let path, let detail):
            return "\(path) is not a CacheLog database (\(detail))"
        case .newerFormat(let found, let supported):
            return "database format \(found) is newer than this CacheLog supports (\(supported)); open it read-only or upgrade"
        case .alreadyOpen(let path):
            return "\(path) is already open in this process; share the open EventLog instead"
        case .readOnly:
            return "the database is open read-only"
        case .emptyBatch:
            return "an append needs at least one event"
        case .emptyKey:
            return "keys must not be empty"
        case .keyTooLong(let length, let maximum):
            return "key is \(length) bytes; the maximum is \(maximum)"
        case .payloadTooLarge(let length):
            return "payload is \(length) bytes; the maximum is \(UInt32.max)"
        case .invalidMetadata(let detail):
            return "invalid put metadata: \(detail)"
        case .invalidRetention(let detail):
            return "invalid retention policy: \(detail)"
        case .exceedsSizeLimit(let bytes, let limit):
            return "the save needs about \(bytes) bytes of the database (its records and the pages every database keeps), more than its size limit of \(limit) bytes; nothing was written"
        case .truncated(let path, let size, let expected):
            let uses = expected.map { "the database uses \($0)" } ?? "LMDB's meta pages need more"
            return "\(path)/data.mdb is truncated: it has \(size) bytes, but \(uses); nothing was read (restore it from a backup)"
        case .corruptRecord(let seq, let detail):
            return "corrupt record at seq \(seq): \(detail)"
        case .corruptStateRow(let key):
            return "the state row for key \"\(key)\" is malformed; rebuild the state from the log"
        case .corruptMeta(let detail):
            return "the database's counters are damaged (\(detail)); rebuild them from the log"
        case .corruptCheckpoint(let seq, let detail):
            return "corrupt checkpoint at seq \(seq): \(detail)"
        case .historyCompacted(let first):
            return "history before seq \(first) was compacted"
        case .historyTrimmed(let key, let first):
            return "the history of \"\(key)\" before seq \(first) was trimmed by the retention policy"
        case .compressionFailed(let code):
            return "could not compress the payload (zlib code \(code))"
        case .storageFull(let operation, let code):
            return "no room to write the database (\(code) during \(operation)); nothing was written: free some space and try again"
        case .lmdb(let operation, let code) where code.isDamagedStructure:
            return "\(operation) failed: \(code) (\(code.rawValue)): the database's own pages are damaged, and no command can read past them: restore the database directory from a backup, or remove it (a cache loses only its history)"
        case .untrustedPath(let path, let detail):
            return "refusing the database at \(path): \(detail)"
        case .damaged(let path, let page, let detail):
            return "\(path)/data.mdb is damaged: page \(page) \(detail); nothing was read past it: restore the database directory from a backup, or move data.mdb aside and start again (a cache loses only its history; an app opening with onDamage: .moveAside has that done)"
        case .lmdb(let operation, let code):
            return "\(operation) failed: \(code) (\(code.rawValue))"
        }
    }
}

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do). Without these it reads
// "The operation could not be completed. (… error 1.)", not the sentence `description` gives.

extension CacheLogError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
