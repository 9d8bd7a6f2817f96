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
import Logging

/// A durable, append-only log of cache events in LMDB, with the current state (the projection of
/// the log: each key's live put) kept beside it.
///
/// Every operation is an ``Event`` appended under the next sequence number; the state
/// (key → live `put`) is updated in the same transaction, so every reader, in this process or
/// another, sees the log and the state agree. Payloads are stored zlib-compressed with a checksum;
/// a put whose payload equals its key's previous version refers to it, and one that mostly
/// equals it is stored as a delta against it (`CacheLog.docc/Format.md`).
///
/// Open one instance per database directory and share it: LMDB forbids opening an environment
/// twice in one process. All methods are safe to call from any task.
public final class EventLog: Sendable {
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

    /// The database directory.
    public let path: String
    /// The clock that stamps `recordedAt` (``Options/clock``), and what a follow up to a date
    /// waits for: whoever composes caches on this log takes it from here, so that the stamps of
    /// saves and of events come from one clock.
    public let clock: @Sendable () -> Date
    let environment: Environment
    let tables: LogTables
    let writer: Writer
    let logger: Logger
    let compressionLevel: Int32
    /// The payload each key last had here, for the next save's delta and the next load.
    let recentPayloads = RecentPayloads()

    /// Opens the database in directory `path`, creating it (and the directory) when it does not
    /// exist, if `options.createIfMissing`. A directory that holds other files is not taken over.
    /// What it creates is its owner's only: the directories it makes (the database's and any
    /// missing above it) 0700, the database files 0600; a directory that exists keeps its mode.
    ///
    /// - Throws: ``CacheLogError``; among them ``CacheLogError/damaged(path:page:detail:)`` when
    ///   a page of the data file is not one LMDB could follow safely (checked before LMDB reads
    ///   any tree), unless ``Options/onDamage`` moves the file aside.
    public convenience init(path: String, options: Options = Options()) throws {
        try self.init(path: path, options: options, withoutLock: false)
    }

    /// `withoutLock`: a read-only open reads as one that may not write `lock.mdb` does (a copy of
    /// the database, ``Options/readOnly``): the tests' way there, since no file mode keeps root
    /// from writing.
    init(path: String, options: Options, withoutLock: Bool) throws {
        try DatabasePath.check(path, writing: !options.readOnly, shared: options.sharedWithOtherUsers)
        let fileManager = FileManager.default
        if let isDirectory = isDirectory(atPath: path) {
            guard isDirectory else { throw CacheLogError.notADirectory(path: path) }
            let contents = (try? fileManager.contentsOfDirectory(atPath: path)) ?? []
            if !contents.contains("data.mdb") {
                // Another process may be inside LMDB's open, creating this database right now:
                // it makes lock.mdb first and data.mdb a moment later. LMDB's exclusive lock on
                // lock.mdb then makes this open wait until that one has written the meta pages,
                // so a directory with nothing but lock.mdb is a database being born, not a stranger.
                // A stranger is named as one even to an open that would not create: a client
                // pointed at the wrong directory hears so when it opens, not at its first save.
                // A damaged data file moved aside is kept beside its new database, which may not
                // be there yet (another process moved it a moment ago).
                guard contents.allSatisfy({ $0 == "lock.mdb" || $0.hasPrefix("data.mdb.damaged-") }) else {
                    throw CacheLogError.notADatabase(path: path, detail: "directory holds other files and no data.mdb")
                }
                if !options.createIfMissing { throw CacheLogError.noDatabase(path: path) }
            } else {
                try Self.refuseDataFileThatIsNoFile(in: path)
            }
            if !options.readOnly, let denial = WriteAccess.denial(of: path) {
                throw CacheLogError.notWritable(path: path, reason: denial)
            }
        } else {
            if !options.createIfMissing { throw CacheLogError.noDatabase(path: path) }
            try PrivateDirectory.create(path)
        }
        let canonical = OpenPaths.canonical(path)
        try OpenPaths.claim(canonical)
        func openEnvironment() throws -> Environment {
            if !options.readOnly { try Self.refuseEmptyDataFile(in: path) }
            return try Environment(
                path: canonical, readOnly: options.readOnly, noSync: options.durability == .unsynced,
                mapSize: options.initialMapSize, logger: options.logger, withoutLock: withoutLock)
        }
        let movedAside: DamagedDataFile?
        do {
            if options.onDamage == .moveAside && !options.readOnly {
                (self.environment, movedAside) = try DamagedDataFile.openMovingDamageAside(canonical, at: options.clock(), openEnvironment)
            } else {
                (self.environment, movedAside) = (try openEnvironment(), nil)
            }
        } catch {
            OpenPaths.release(canonical)
            throw error
        }
        self.path = path
        clock = options.clock
        logger = options.logger
        compressionLevel = Int32(options.compressionLevel)
        tables = LogTables(environment.tables, checkpointInterval: options.checkpointInterval)
        writer = Writer(environment: environment, tables: tables, clock: options.clock,
                        retains: options.automaticRetention && !options.readOnly)
        if !options.readOnly && environment.tables.stampedFormat < Environment.formatVersion {
            try upgradeFormat()
        }
        if let movedAside {
            options.logger.warning("moved a damaged database aside", metadata: ["to": "\(movedAside.movedTo)", "damage": "\(movedAside.damage)"])
        }
        // A database started over records why, with the policy it would have followed anyway.
        let initialRetention = options.initialRetention ?? movedAside.map { _ in (RetentionPolicy.default, "CacheLog") }
        if environment.tables.createdNow, let (policy, by) = initialRetention {
            // The first record of the database, before any save: every process applies it from the start.
            let by = movedAside?.recordedBy(by) ?? by
            let prepared = try EventCodec.prepare(.retention(policy, by: by), maxKeySize: maxKeySize)
            let (tables, clock) = (self.tables, self.clock)
            _ = try environment.write { txn in try tables.append(txn, batches: [(events: [prepared], conditions: [])], now: clock()) }
        }
        registerShared(canonical)
    }

    /// Gives a database written by an earlier format what this one adds (the key index, the
    /// `refs` table: one pass over the log, in one write transaction), on its first open for
    /// writing. Until then, reads scan the log for one key's history; nothing else needs them.
    private func upgradeFormat() throws {
        let started = ContinuousClock.now
        let tables = self.tables
        let added = try environment.write { txn in try tables.upgradeFormat(txn) }
        if added.keyIndex > 0 {
            logger.notice("built the key index", metadata: ["entries": "\(added.keyIndex)", "took": "\(ContinuousClock.now - started)"])
        }
        if added.refs > 0 {
            logger.notice("built the table of shared payloads", metadata: ["entries": "\(added.refs)", "took": "\(ContinuousClock.now - started)"])
        }
    }

    /// A data.mdb that is not a regular file (a FIFO, a directory, a device) is no database: LMDB's
    /// read-only open of a FIFO waited for a writer for ever, and a directory was called a
    /// truncated file. Links are followed, as LMDB's open follows them.
    private static func refuseDataFileThatIsNoFile(in path: String) throws {
        var info = stat()
        guard stat(path + "/data.mdb", &info) == 0 else { return }
        let kind: String? = switch info.st_mode & S_IFMT {
        case S_IFREG: nil
        case S_IFIFO: "a FIFO"
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
        if let kind { throw CacheLogError.notADatabase(path: path, detail: "its data.mdb is \(kind), not a file") }
    }

    /// LMDB takes an empty data.mdb for a new database and writes a fresh one over it, which
    /// would hide a file truncated to nothing. An empty data.mdb is also what a process creating
    /// the database has for the instant before it writes the meta pages (under LMDB's lock, in
    /// the same call), so the file gets a moment to grow before it is called truncated.
    private static func refuseEmptyDataFile(in path: String) throws {
        let file = path + "/data.mdb"
        // stat, not FileManager's attributesOfItem: that one also looks up the owner's user and
        // group names, which `callgrind` of `cachelog load` counted as 5 % of the process.
        func size() -> Int? {
            var info = stat()
            return stat(file, &info) == 0 ? Int(info.st_size) : nil
        }
        let deadline = Date().addingTimeInterval(2)
        while size() == 0 {
            guard Date() < deadline else {
                throw CacheLogError.truncated(path: path, size: 0, expected: nil)
            }
            usleep(10_000)
        }
    }

    /// Appends `events` as one atomic batch: all of them get consecutive seqs and are committed in
    /// one transaction, or none is. Returns the seqs they got.
    ///
    /// Validation and compression run on the calling task; the single writer then frames and stores
    /// the batch, sharing its commit (and its sync) with whatever else arrived meanwhile.
    @discardableResult
    public func append(_ events: [Event]) async throws -> ClosedRange<UInt64> {
        try await prepareAndAppend(events).range
    }

    /// Prepares `events` announced to the writer (``Writer/expectAppend()``, so that a commit
    /// starting meanwhile waits for them), appends them under `conditions`, and remembers the
    /// payloads of the puts it stored.
    private func prepareAndAppend(_ events: [Event], conditions: [AppendCondition] = []) async throws -> AppendedBatch {
        writer.expectAppend()
        let batch: PreparedBatch
        do {
            batch = try prepare(events)
        } catch {
            writer.cancelExpectedAppend()
            throw error
        }
        let appended = try await writer.append(batch.events, conditions: conditions, expected: true)
        remember(batch.versions, storedAs: appended.puts)
        return appended
    }

    /// A batch ready for the writer, and the payloads of its puts to remember once it commits.
    struct PreparedBatch {
        var events: [EventCodec.Prepared]
        var versions: [PendingVersion]
    }

    /// A put's payload, to remember once the writer has stored it (nil: nothing to remember of
    /// this put).
    struct PendingVersion {
        var key: [UInt8]
        var payload: Data?
    }

    /// Validates and compresses a batch on the calling task, before it queues for the writer, and
    /// makes the deltas its puts may be stored as (a put stored as a delta is not compressed whole).
    func prepare(_ events: [Event]) throws -> PreparedBatch {
        guard !environment.readOnly else { throw CacheLogError.readOnly }
        guard !events.isEmpty else { throw CacheLogError.emptyBatch }
        var prepared = try events.map { event in
            var deltaSized = false
            if case .put(_, let payload, _, _, _) = event { deltaSized = Self.deltaSizes.contains(payload.count) }
            return try EventCodec.prepare(event, maxKeySize: environment.maxKeySize, level: compressionLevel, compressing: !deltaSized)
        }
        addDeltas(to: &prepared)
        var versions: [PendingVersion] = []
        // A put that is a delta or equals its live version needs its whole body only if the
        // writer finds its base gone: the writer compresses it then.
        for index in prepared.indices where prepared[index].kind == .put {
            let key = prepared[index].key
            guard let payload = prepared[index].uncompressed else {
                // Compressed already: not a size a delta is tried at, nothing to remember.
                versions.append(PendingVersion(key: key, payload: nil))
                continue
            }
            // A put equal to its live version as prepared is stored as a reference to it, which
            // leaves the remembered version as it is, or whole (another put of the key in this
            // batch came first), and then its payload is what its record holds.
            if prepared[index].delta == nil && prepared[index].identical == nil { try prepared[index].compressBody() }
            versions.append(PendingVersion(key: key, payload: payload))
        }
        return PreparedBatch(events: prepared, versions: versions)
    }

    /// Remembers the payloads a committed batch saved (``RecentPayloads``): for each key, its
    /// last put in the batch (the one live after it), with the seq and CRC-32 the writer stored
    /// it with. A last put stored as a reference leaves what is remembered of the key as it is
    /// (the version it refers to is still the live payload's record); a key whose last put the
    /// writer left out, or whose payload was not kept to remember, is forgotten.
    private func remember(_ versions: [PendingVersion], storedAs puts: [StoredPut]) {
        var last: [[UInt8]: PendingVersion] = [:]
        for version in versions { last[version.key] = version }
        var stored: [[UInt8]: StoredPut] = [:]
        for put in puts { stored[put.key] = put }
        for (key, version) in last {
            guard let put = stored[key], let payload = version.payload else {
                recentPayloads.forget(key)
                continue
            }
            if let checksum = put.checksum {
                recentPayloads.remember(RememberedPayload(payload: payload, seq: put.seq, checksum: checksum), of: key)
            }
        }
    }

    /// The payload sizes a put may be stored as a delta at. Smaller payloads compress to a few
    /// hundred bytes, about what a delta's record costs anyway; up to the largest, a whole body
    /// made by the writer (when the base is gone) always fits its record's u32 lengths.
    static let deltaSizes = 1024...Deflate.maximumInput

    /// Gives each put prepared without its whole body (``deltaSizes``) whose key has a live
    /// version what the writer needs to store less than a whole copy: the note that its payload
    /// equals that version's, or a delta against that version when the delta is under half of
    /// what a whole copy would take (judged by how the whole put that starts the version's chain
    /// compressed) and the version's chain is not at ``EventCodec/maxDeltaDepth`` already. The
    /// live versions are read in one short read transaction. Nothing here can fail the append:
    /// what cannot be read leaves the put whole, and the writer uses a delta only while its base
    /// is the record it was made from.
    ///
    /// A delta is not tried past a third of the payload inserted (its inserted bytes compress
    /// worse than the whole, so it would seldom come under half), and a sample of the payload
    /// that says more than that ends the try before the scan (Delta): a save of a feed unlike
    /// the live one pays about 20 µs for the try, not the 60 µs of half a scan.
    ///
    /// The live versions are remembered (``RecentPayloads``), and a remembered one that is still
    /// live is not inflated again.
    private func addDeltas(to prepared: inout [EventCodec.Prepared]) {
        let candidates = prepared.indices.filter { prepared[$0].uncompressed != nil }
        guard !candidates.isEmpty else { return }
        let (tables, recentPayloads) = (self.tables, self.recentPayloads)
        let keys = candidates.map { prepared[$0].key }
        let bases: [LogTables.BaseVersion?] = (try? environment.read { txn in
            keys.map { key in
                let known = recentPayloads.version(of: key)
                let base = tables.baseVersion(txn, key: key, known: known)
                if let base, known?.seq != base.seq || known?.checksum != base.checksum {
                    recentPayloads.remember(RememberedPayload(payload: base.payload, seq: base.seq, checksum: base.checksum), of: key)
                }
                return base
            }
        }) ?? []
        for (index, base) in zip(candidates, bases) {
            guard let base, let payload = prepared[index].uncompressed else { continue }
            if base.payload == payload {
                prepared[index].identical = EventCodec.IdenticalPayload(seq: base.seq, checksum: base.checksum)
                continue
            }
            let whole = Double(payload.count) * base.compression
            guard base.depth < EventCodec.maxDeltaDepth,
                  let body = try? EventCodec.deltaBody(from: base.payload, to: payload, baseSeq: base.seq, depth: base.depth + 1,
                                                       level: compressionLevel, maxInserted: payload.count / 3),
                  Double(body.count) * 2 < whole
            else { continue }
            prepared[index].delta = EventCodec.PreparedDelta(
                base: base.seq, baseChecksum: base.checksum, baseLength: base.payload.count, depth: base.depth + 1, body: body)
        }
    }

    /// Appends `events` as one atomic batch, as ``append(_:)-([Event])`` does, unless the live entry
    /// of `key` is newer: a save never replaces a newer cache.
    ///
    /// `position` is the log's last seq (``lastSeq()``, 0 when there is no database yet) when the
    /// fetch of what the batch saves began, read before its request. Every put of `key` (and of
    /// `others`) in the batch records it (``Event/sinceName``), and the batch is superseded when
    /// the key's live put is newer by the log's own order
    /// (``LogState/Entry/supersedes(aFetchBeganAt:)``): its fetch began at or after `position` (of
    /// two fetches that began with nothing appended between them, the one that landed first
    /// stays), or, for a put that recorded no position (an older database, a plain append), it
    /// landed after `position`. The seqs are what every writer of the log shares; the cache
    /// timestamps, taken by clocks that may disagree, are kept for ages and are not compared. The
    /// batch is superseded too when the key was removed (an explicit delete) after `position`:
    /// what was fetched before a removal does not bring the cache back. No live entry, or one
    /// whose put cannot be read, lets the batch append. A `position` past the log's last seq
    /// counts as the last seq at the commit.
    ///
    /// The check runs inside the write transaction that would commit the batch, after every batch
    /// committed before it (another process's, or one earlier in the same group commit), so no
    /// save can land between the check and the append. A superseded batch writes nothing and
    /// takes no seqs; the batches sharing its commit are appended as usual.
    ///
    /// `others` are keys saved in the same batch, from the same fetch (a search's objects), each
    /// judged by the same rule: the events of one whose live entry is newer are left out, and the
    /// rest of the batch is appended; ``AppendOutcome/appended(_:leftOut:)`` names the keys left out.
    ///
    /// - Returns: ``AppendOutcome/appended(_:leftOut:)`` with the seqs the batch got, or
    ///   ``AppendOutcome/superseded(by:)`` with the newer live entry, or
    ///   ``AppendOutcome/removed(seq:at:)`` naming the removal.
    /// - Throws: what ``append(_:)-([Event])`` throws, ``CacheLogError/emptyKey`` or
    ///   ``CacheLogError/keyTooLong(length:maximum:)`` for `key`, and
    ///   ``CacheLogError/emptyBatch`` when `others` are given and no event is about `key`.
    public func append(
        _ events: [Event], unlessSupersededSince position: UInt64, liveAt key: String, leavingNewer others: [String] = []
    ) async throws -> AppendOutcome {
        let keyBytes = Array(key.utf8)
        guard !keyBytes.isEmpty else { throw CacheLogError.emptyKey }
        guard keyBytes.count <= maxKeySize else { throw CacheLogError.keyTooLong(length: keyBytes.count, maximum: maxKeySize) }
        // With others, the batch must keep events of its own key whatever their conditions leave out.
        guard others.isEmpty || events.contains(where: { $0.key.utf8.elementsEqual(keyBytes) }) else { throw CacheLogError.emptyBatch }
        // Keys are bytes: two spellings of one text (NFC and NFD) are two keys, each judged alone.
        // A set beside the ordered keys: a search saves an object per result, and looking each
        // up in the list made a save of 2,000 results take seconds.
        var judged = [keyBytes]
        var isJudged: Set<[UInt8]> = [keyBytes]
        for other in others.map({ Array($0.utf8) }) where isJudged.insert(other).inserted { judged.append(other) }
        let recorded = events.map { event in
            isJudged.contains(Array(event.key.utf8)) ? event.recording(since: position) : event
        }
        let conditions = judged.enumerated().map { index, bytes in
            AppendCondition(key: bytes, since: position, wholeBatch: index == 0)
        }
        do {
            let appended = try await prepareAndAppend(recorded, conditions: conditions)
            return .appended(appended.range, leftOut: appended.leftOut.map { String(decoding: $0, as: UTF8.self) })
        } catch let superseded as SupersededBatch {
            if superseded.removal { return .removed(seq: superseded.live.seq, at: superseded.live.timestamp) }
            return .superseded(by: superseded.live)
        }
    }

    /// Appends one event. See ``append(_:)-([Event])``.
    @discardableResult
    public func append(_ event: Event) async throws -> UInt64 {
        try await append([event]).lowerBound
    }

    /// The live payload of `key` and its cache timestamp, or nil when the key has no live value.
    /// Throws ``CacheLogError/corruptRecord(seq:detail:)`` when the stored record fails its checks.
    public func retrieve(_ key: String) throws -> StoredValue? {
        try retrieve(key, unlessPayloadIs: nil)
    }

    /// ``retrieve(_:)``, leaving out the payload when it is the one the reader holds already:
    /// the bytes of the record at `known` (a ``StoredValue/payloadSeq`` it read before). Then only
    /// the put's header is read, nothing inflated: what lets a reader keep decoded items in
    /// memory and know, in the same read, that they are still the live ones.
    public func retrieve(_ key: String, unlessPayloadIs known: UInt64?) throws -> StoredValue? {
        let keyBytes = Array(key.utf8)
        guard !keyBytes.isEmpty else { throw CacheLogError.emptyKey }
        return try environment.read { txn in
            guard let entry = try tables.entry(txn, key: keyBytes, onDamaged: logDamagedRows) else { return nil }
            if let value = try storedValue(txn, entry, key: keyBytes, unlessPayloadIs: known) { return value }
            logDamagedRows([key])
            // The row names a cache the log does not hold: it cannot be read back, which
            // validation answers with a delete that also removes the row.
            guard let folded = try tables.foldedEntry(txn, key: keyBytes) else { throw CacheLogError.corruptStateRow(key: key) }
            guard folded != entry, let value = try storedValue(txn, folded, key: keyBytes, unlessPayloadIs: known) else {
                throw CacheLogError.corruptRecord(seq: entry.seq, detail: "the live record is not this key's put")
            }
            return value
        }
    }

    /// The payload of the put that `entry` names, or nil when the record at its seq is not a put
    /// of this key. The record passed its checksum, so it is as it was written: then the
    /// state row that gave `entry` is what is damaged, and the log (the fold) knows better.
    private func storedValue(_ txn: Transaction, _ entry: LogState.Entry, key: [UInt8], unlessPayloadIs known: UInt64?) throws -> StoredValue? {
        guard let record = try txn.get(tables.events, SeqKey.bytes(entry.seq)) else {
            throw CacheLogError.corruptRecord(seq: entry.seq, detail: "the live record is missing")
        }
        let header = try EventCodec.decodeHeader(record, seq: entry.seq)
        guard header.kind == .put, EventCodec.keyBytes(header, in: record).elementsEqual(key) else { return nil }
        let payloadSeq = try EventCodec.payloadSeq(header, in: record, seq: entry.seq)
        let omitted = payloadSeq == known
        let payload = omitted ? Data() : try tables.payload(txn, header, in: record, seq: entry.seq, known: recentPayloads.version(of: key))
        return StoredValue(
            payload: payload, timestamp: Date(stamp: header.timestamp), seq: entry.seq,
            maxAge: header.recordedMaxAge, metadata: try EventCodec.metadata(header, in: record, seq: entry.seq),
            recordedAt: Date(stamp: header.recordedAt), payloadSeq: payloadSeq, isPayloadOmitted: omitted)
    }

    /// The live entry of `key` (its put's seq, timestamp and size) without reading the payload.
    ///
    /// A state row that names a record other than this key's put (a damaged row) is not believed:
    /// the answer then comes from the log, as ``retrieve(_:)``'s does, so that a reader never
    /// judges the key by another record's policy or contract.
    public func entry(_ key: String) throws -> LogState.Entry? {
        let keyBytes = Array(key.utf8)
        guard !keyBytes.isEmpty else { throw CacheLogError.emptyKey }
        return try environment.read { txn in
            guard let row = try tables.entry(txn, key: keyBytes, onDamaged: logDamagedRows) else { return nil }
            if let checked = try tables.checkedAgainstItsPut(row, key: keyBytes, txn) { return checked }
            logDamagedRows([key])
            return try tables.foldedEntry(txn, key: keyBytes).map { try tables.withRecordedPolicy($0, txn) }
        }
    }

    /// Whether the state holds a row for `key`: a live cache, or a row that damage left naming
    /// none (``entry(_:)`` then answers from the log). A delete or an expire of the key clears it.
    public func isLive(_ key: String) throws -> Bool {
        let keyBytes = Array(key.utf8)
        guard !keyBytes.isEmpty else { throw CacheLogError.emptyKey }
        return try environment.read { txn in try txn.get(tables.state, keyBytes) != nil }
    }

    /// The state now.
    ///
    /// Reads survive a damaged row of the stored state: the answer then comes from the log
    /// itself, and the damage is logged; ``verify()`` names it, ``rebuildState()`` repairs it.
    public func state() throws -> LogState {
        try environment.read { txn in
            LogState(
                seq: try tables.lastSeq(txn),
                entries: try tables.currentEntries(txn, onDamaged: logDamagedRows).map { try tables.withRecordedPolicy($0, txn) })
        }
    }

    func logDamagedRows(_ keys: [String]) {
        logger.warning(
            "damaged state rows: answered from the log; 'rebuild' repairs them",
            metadata: ["keys": "\(keys.map { "\"\($0)\"" }.joined(separator: ", "))"])
    }

    /// The state as it was right after `position`: a seq, or the last event recorded at or
    /// before a date. Served from the nearest checkpoint plus the events after it.
    public func state(asOf position: LogPosition) throws -> LogState {
        try environment.read { txn in
            let last = try tables.lastSeq(txn)
            let seq = min(try tables.resolve(txn, position, upperBound: true), last)
            var fold = try tables.foldedState(txn, asOf: seq)
            var state = fold.state(at: seq)
            // A key whose history retention trimmed past `seq` folds to a guess there: left out, and named.
            state.trimmed = try Retention(tables: tables).keysTrimmed(after: seq, txn).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            let trimmed = Set(state.trimmed.map { Array($0.utf8) })
            state.entries = try state.entries.filter { !trimmed.contains(Array($0.key.utf8)) }.map { try tables.withRecordedPolicy($0, txn) }
            return state
        }
    }

    /// The live entry of `key` right after `position`, as ``state(asOf:)`` would list it, and the
    /// seq that position is. Served from the key index: it costs what the key's history has, not
    /// what the log has (a database from before the index, opened read-only, folds the log).
    public func entry(_ key: String, asOf position: LogPosition) throws -> (seq: UInt64, entry: LogState.Entry?) {
        let keyBytes = Array(key.utf8)
        guard !keyBytes.isEmpty else { throw CacheLogError.emptyKey }
        return try environment.read { txn in
            let seq = min(try tables.resolve(txn, position, upperBound: true), try tables.lastSeq(txn))
            let trimmed = try Retention(tables: tables).historyStart(txn, key: keyBytes)
            guard seq >= trimmed else { throw CacheLogError.historyTrimmed(key: key, firstAvailable: trimmed) }
            let entry = try tables.foldedEntry(txn, key: keyBytes, asOf: seq).map { try tables.withRecordedPolicy($0, txn) }
            return (seq, entry)
        }
    }

    /// The last seq appended (0 for an empty log).
    public func lastSeq() throws -> UInt64 {
        try environment.read { txn in try tables.lastSeq(txn) }
    }

    /// The seq the history starts after: a compaction removed the history up to it
    /// (``CompactionReport/firstAvailable``); 0 when nothing was compacted.
    ///
    /// The state as of it is the earliest ``state(asOf:)`` answers. The records at or before it
    /// that are still stored were kept for that state or for the bytes a later put refers to:
    /// they are not the history of what happened before it, which is gone.
    public func compactionBase() throws -> UInt64 {
        try environment.read { txn in try tables.baseSeq(txn) }
    }

    /// Flushes unsynced commits to disk (for ``Durability/unsynced``).
    public func sync() throws {
        try environment.sync()
    }

    /// The longest key, in UTF-8 bytes, that this database accepts.
    public var maxKeySize: Int { environment.maxKeySize }

    /// Whether this instance only reads (``Options/readOnly``): appends throw
    /// ``CacheLogError/readOnly``.
    public var isReadOnly: Bool { environment.readOnly }

    /// The longest key, in UTF-8 bytes, that any database accepts, known before one is opened:
    /// what lets a first save that could never land leave the disk as it was.
    public static var keySizeLimit: Int { Environment.keySizeLimit }
}
