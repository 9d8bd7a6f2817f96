#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// How a log is opened: its options, how a commit waits for the disk, the log a process shares
/// per directory, and what this release opens.
extension EventLog {
    /// The log this process has open on the database in `path`, whoever opened it; else the log
    /// opened now with `options`.
    ///
    /// A database is open at most once per process: LMDB's locks are per process, and
    /// `init(path:options:)` refuses a second open as ``CacheLogError/alreadyOpen(path:)``. Two
    /// parts of one app that open a cache on one directory share the first one's log, and its
    /// options (durability, clock, read-only) hold. A log opened read-only on a database it could
    /// write is not shared with a caller that writes: open the writing one first.
    ///
    /// - Throws: what `init(path:options:)` throws.
    public static func shared(path: String, options: Options = Options()) throws -> EventLog {
        try SharedLogs.log(path: path, options: options)
    }

    /// The longest key, in UTF-8 bytes, that any database accepts, known before one is opened:
    /// what lets a first save that could never land leave the disk as it was.
    public static var keySizeLimit: Int { Environment.keySizeLimit }

    /// This release of the package, as `cachelog --version` prints it. The one place it is written.
    public static let version = "0.10.0"

    /// The database format this release writes (Format.md; ``CacheLogError/newerFormat(found:supported:)``).
    public static var databaseFormat: UInt32 { Environment.formatVersion }

    /// How an instance opens and writes its database.
    public struct Options: Sendable {
        /// Open for reading only: never creates, never writes; appends throw ``CacheLogError/readOnly``.
        /// It needs read access to `data.mdb` only. When `lock.mdb` cannot be written (another
        /// user's database), writers cannot see this reader (LMDB's lock file holds the table of
        /// readers that tells them which pages are in use), so it reads a private copy of the
        /// database instead, in memory: the copy takes about as much memory as `data.mdb` has
        /// pages in use (twice that while a newer copy replaces it), and a read that finds the
        /// database changed since copies it again (measured: 7 ms for 12 MB, 70 ms for 120 MB).
        /// Each read sees every commit made before it began, as with the lock file. A copy made
        /// while another process commits twice or more is made again, a few times; then the read
        /// throws ``CacheLogError/overlappedWrites(path:)``, and reading again usually succeeds.
        public var readOnly: Bool
        /// Create the database (and its directory) when there is none. When false, a missing
        /// database is ``CacheLogError/noDatabase(path:)``, as it always is for `readOnly`.
        public var createIfMissing: Bool
        /// `.synced` (default): every commit is on disk when `append` returns.
        public var durability: Durability
        /// The LMDB map size to start with; the map doubles by itself whenever it fills.
        public var initialMapSize: Int
        /// Minimum number of events between checkpoints of the state.
        public var checkpointInterval: Int
        /// Compression level for payloads, 1 (fastest, the default) to 9 (smallest), as libdeflate
        /// counts them (the records are zlib streams). Level 1 stores a typical JSON feed about 3.0×
        /// smaller than its text; 6 stores it about 3.1× smaller and takes about 4× as long to
        /// compress. The level is per record: records of any level read
        /// back the same, so a database written at one level is read and appended to at another.
        public var compressionLevel: Int
        /// The clock that stamps `recordedAt`.
        public var clock: @Sendable () -> Date
        /// Where the engine reports map growth and cleared reader slots. Silent by default: a
        /// library must not write to an app's stdout unless the app asks for it.
        public var logger: Logger
        /// The retention policy to record when this open creates the database (nil: none is
        /// recorded, and the database follows ``RetentionPolicy/default`` until one is), with who
        /// set it. A database that exists keeps its own.
        public var initialRetention: (policy: RetentionPolicy, by: String)?
        /// Apply the database's ``RetentionPolicy`` as appends go (on by default): every process
        /// that writes keeps the database within it. Off, the log grows until
        /// ``EventLog/applyRetention()`` or ``EventLog/compact(before:)`` is called; a benchmark
        /// or a test that measures growth turns it off.
        public var automaticRetention: Bool
        /// What the open does when the data file is damaged: throw it (``DamageRecovery/fail``,
        /// the default), or move it aside and start a new database (``DamageRecovery/moveAside``).
        public var onDamage: DamageRecovery
        /// Accept a database whose directory or files belong to, or may be written by, other users
        /// (off by default): a cache a group shares on purpose. Off, an open that may write refuses
        /// them (``CacheLogError/untrustedPath(path:detail:)``); links another user planted are
        /// refused either way.
        public var sharedWithOtherUsers: Bool

        /// Options with every default spelled out; each parameter sets the property of its name.
        /// `createIfMissing` is off when `readOnly` is on, `checkpointInterval` is at least 1, and
        /// `compressionLevel` is clamped to 1...9.
        public init(
            readOnly: Bool = false, createIfMissing: Bool = true, durability: Durability = .synced, initialMapSize: Int = 64 << 20,
            checkpointInterval: Int = 4096, compressionLevel: Int = 1, clock: @escaping @Sendable () -> Date = { Date() },
            logger: Logger = Logger(label: "cachelog", factory: { _ in SwiftLogNoOpLogHandler() }), automaticRetention: Bool = true,
            initialRetention: (policy: RetentionPolicy, by: String)? = nil, onDamage: DamageRecovery = .fail,
            sharedWithOtherUsers: Bool = false
        ) {
            self.readOnly = readOnly
            self.createIfMissing = createIfMissing && !readOnly
            self.durability = durability
            self.initialMapSize = initialMapSize
            self.checkpointInterval = max(1, checkpointInterval)
            self.compressionLevel = min(9, max(1, compressionLevel))
            self.clock = clock
            self.logger = logger
            self.automaticRetention = automaticRetention
            self.initialRetention = initialRetention
            self.onDamage = onDamage
            self.sharedWithOtherUsers = sharedWithOtherUsers
        }
    }

    /// Whether a commit waits for the disk: the trade between losing the last commits in a crash
    /// and the cost of the flush (LMDB syncs twice per commit: the data, then the meta page).
    public enum Durability: Sendable {
        /// Each commit is flushed to disk before `append` returns (concurrent appends share one flush).
        case synced
        /// Commits are not flushed; call ``EventLog/sync()``. A crash may lose the last commits,
        /// never corrupt the database.
        case unsynced
    }
}
