#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
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
/// Open one instance per database directory and share it (``shared(path:options:)``): LMDB
/// forbids opening an environment twice in one process. All methods are safe to call from any
/// task, and every one that throws throws ``CacheLogError``: a failure of LMDB or of the disk,
/// or, for a reader without the lock file, ``CacheLogError/overlappedWrites(path:)``, besides the
/// errors each method's `- Throws:` names.
public final class EventLog: Sendable {
    /// The database directory.
    public let path: String
    /// The clock that stamps `recordedAt` (``Options/clock``): whoever composes caches on this
    /// log takes it from here, so that saves and events are stamped by one clock.
    public let clock: @Sendable () -> Date
    let environment: Environment
    let tables: LogTables
    let writer: Writer
    let logger: Logger
    /// The payload each key last had here, for the next save's delta and the next load.
    let recentPayloads = RecentPayloads()
    /// Validates and compresses what is appended, before it queues for the writer.
    let preparation: PutPreparation
    private var reader: EventReader { EventReader(environment: environment, tables: tables, logger: logger, clock: clock) }

    /// Opens the database in directory `path`, creating it (and the directory) when it does not
    /// exist, if `options.createIfMissing`. A directory that holds other files is not taken over.
    /// What it creates is its owner's only: directories 0700, files 0600.
    ///
    /// - Throws: ``CacheLogError``; among them ``CacheLogError/damaged(path:page:detail:)`` when a
    ///   page is not one LMDB could follow, unless ``Options/onDamage`` moves the file aside.
    public convenience init(path: String, options: Options = Options()) throws {
        try self.init(path: path, options: options, withoutLock: false)
    }

    /// `withoutLock`: a read-only open reads as one that may not write `lock.mdb` does (a copy,
    /// ``Options/readOnly``): the tests' way there, since no file mode keeps root from writing.
    init(path: String, options: Options, withoutLock: Bool) throws {
        try DatabasePath.check(path, writing: !options.readOnly, shared: options.sharedWithOtherUsers)
        try LogOpening.prepareDirectory(path, options)
        let canonical = OpenPaths.canonical(path)
        let movedAside: DamagedDataFile?
        (environment, movedAside) = try LogOpening.openEnvironment(path, canonical: canonical, options, withoutLock: withoutLock)
        self.path = path
        clock = options.clock
        logger = options.logger
        tables = LogTables(environment.tables, checkpointInterval: options.checkpointInterval)
        preparation = PutPreparation(environment: environment, tables: tables, recentPayloads: recentPayloads, level: Int32(options.compressionLevel))
        writer = Writer(environment: environment, tables: tables, clock: options.clock,
                        appliesRetention: options.automaticRetention && !options.readOnly)
        try LogOpening.finish(environment, tables, options, movedAside: movedAside)
        SharedLogs.register(self, at: canonical)
    }

    /// Appends `events` as one atomic batch: all of them get consecutive seqs and are committed in
    /// one transaction, or none is. Returns the seqs they got.
    ///
    /// Validation and compression run on the calling task; the single writer then stores the
    /// batch, sharing its commit (and its sync) with whatever else arrived meanwhile.
    ///
    /// - Throws: ``CacheLogError/readOnly``, ``CacheLogError/emptyBatch``, or what framing an event
    ///   throws (an empty or too long key, a payload too large, metadata the record cannot hold).
    @discardableResult
    public func append(_ events: [Event]) async throws -> ClosedRange<UInt64> {
        try await preparation.append(events, to: writer).range
    }

    /// Appends `events` as ``append(_:)-([Event])`` does, unless the live entry of `key` is
    /// newer: a save never replaces a newer cache.
    ///
    /// The batch is superseded when the key's live put is newer by the log's own order
    /// (``LogState/Entry/supersedes(aFetchBeganAt:)``), or when the key was removed (an explicit
    /// delete) after `position`: what was fetched before a removal does not bring the cache back.
    /// No live entry, or one whose put cannot be read, lets the batch append. The check runs in
    /// the write transaction that would commit the batch, after every batch committed before it,
    /// so no save lands between the check and the append. A superseded batch writes nothing and
    /// takes no seqs; the batches sharing its commit are appended as usual.
    ///
    /// - Parameters:
    ///   - events: The batch. Its puts of `key` and of `others` record `position` (``Event/sinceName``).
    ///   - position: The log's last seq (``lastSeq()``, 0 with no database yet) when the fetch of
    ///     what the batch saves began, read before its request; past the last seq, it counts as
    ///     the last seq at the commit.
    ///   - key: The key the batch saves.
    ///   - others: Keys saved from the same fetch (a search's objects), each judged alone: the
    ///     events of one whose live entry is newer are left out, and the rest is appended.
    /// - Returns: ``AppendOutcome/appended(_:leftOut:)`` with the seqs and the keys left out,
    ///   ``AppendOutcome/superseded(by:)`` with the newer live entry, or
    ///   ``AppendOutcome/removed(seq:at:)`` naming the removal.
    /// - Throws: what ``append(_:)-([Event])`` throws, ``CacheLogError/emptyKey`` or
    ///   ``CacheLogError/keyTooLong(length:maximum:)`` for `key`, and
    ///   ``CacheLogError/emptyBatch`` when `others` are given and no event is about `key`.
    public func append(
        _ events: [Event], unlessSupersededSince position: UInt64, liveAt key: String, leavingNewer others: [String] = []
    ) async throws -> AppendOutcome {
        let batch = try ConditionalBatch.save(events, since: position, key: key, others: others, maxKeySize: maxKeySize)
        do {
            let appended = try await preparation.append(batch.events, to: writer, conditions: batch.conditions)
            return .appended(appended.range, leftOut: appended.leftOut.map { String(decoding: $0, as: UTF8.self) })
        } catch let superseded as SupersededBatch {
            if superseded.removal { return .removed(seq: superseded.live.seq, at: superseded.live.timestamp) }
            return .superseded(by: superseded.live)
        }
    }

    /// Appends one event, as ``append(_:)-([Event])`` appends a batch, and throws what it throws.
    @discardableResult
    public func append(_ event: Event) async throws -> UInt64 {
        try await append([event]).lowerBound
    }

    /// The live payload of `key` and its cache timestamp, or nil when the key has no live value;
    /// it throws what ``retrieve(_:unlessPayloadIs:)`` throws.
    public func retrieve(_ key: String) throws -> StoredValue? {
        try retrieve(key, unlessPayloadIs: nil)
    }

    /// ``retrieve(_:)``, leaving out the payload when it is the one the reader holds already:
    /// the bytes of the record at `known` (a ``StoredValue/payloadSeq`` it read before). Then only
    /// the put's header is read, nothing inflated: what lets a reader keep decoded items in
    /// memory and know, in the same read, that they are still the live ones.
    ///
    /// - Throws: ``CacheLogError/emptyKey``, ``CacheLogError/corruptRecord(seq:detail:)``, or
    ///   ``CacheLogError/corruptStateRow(key:)`` when the row names a cache the log does not hold.
    public func retrieve(_ key: String, unlessPayloadIs known: UInt64?) throws -> StoredValue? {
        let keyBytes = try Self.nonEmpty(key)
        let values = LiveValueReader(tables: tables, recentPayloads: recentPayloads)
        return try environment.read { txn in try values.value(txn, key: keyBytes, unlessPayloadIs: known, onDamaged: logDamagedRows) }
    }

    /// The live entry of `key` (its put's seq, timestamp, size and policy) without its payload.
    ///
    /// A damaged state row, one that names another record than this key's put, is not believed:
    /// the answer comes from the log, so that no reader judges the key by another record's policy.
    ///
    /// - Throws: ``CacheLogError/emptyKey``.
    public func entry(_ key: String) throws -> LogState.Entry? {
        let keyBytes = try Self.nonEmpty(key)
        return try environment.read { txn in try tables.state.entry(txn, key: keyBytes, .checked, onDamaged: logDamagedRows) }
    }

    /// Whether the state holds a row for `key` (a live cache, or a damaged row naming none); a
    /// delete or an expire clears it. Throws ``CacheLogError/emptyKey``.
    public func isLive(_ key: String) throws -> Bool {
        let keyBytes = try Self.nonEmpty(key)
        return try environment.read { txn in try txn.get(tables.schema.state, keyBytes) != nil }
    }

    /// The state now, each entry read as ``entry(_:)`` reads it; a row naming no cache the log
    /// holds is listed as stored, for validation to delete. ``verify()`` names damage.
    public func state() throws -> LogState {
        try environment.read { txn in
            LogState(seq: try tables.counters.lastSeq(txn), entries: try tables.state.entries(txn, checked: true, onDamaged: logDamagedRows))
        }
    }

    private func logDamagedRows(_ keys: [String]) {
        logger.warning("damaged state rows: answered from the log; 'rebuild' repairs them",
                       metadata: ["keys": "\(keys.map { "\"\($0)\"" }.joined(separator: ", "))"])
    }

    /// The UTF-8 bytes of `key`; no key is empty.
    private static func nonEmpty(_ key: String) throws -> [UInt8] {
        let bytes = Array(key.utf8)
        guard !bytes.isEmpty else { throw CacheLogError.emptyKey }
        return bytes
    }

    /// The state as it was right after `position`: a seq, or the last event recorded at or
    /// before a date. Served from the nearest checkpoint plus the events after it.
    ///
    /// - Throws: ``CacheLogError/historyCompacted(firstAvailable:)`` for a point before the history.
    public func state(asOf position: LogPosition) throws -> LogState {
        try environment.read { txn in try PastState(tables: tables).state(txn, asOf: position) }
    }

    /// The live entry of `key` right after `position`, as ``state(asOf:)`` would list it, and the
    /// seq that position is. Served from the key index: it costs what the key's history has, not
    /// what the log has (a database from before the index, opened read-only, folds the log).
    ///
    /// - Throws: ``CacheLogError/emptyKey``, or ``CacheLogError/historyTrimmed(key:firstAvailable:)``
    ///   when retention removed the key's history at that point.
    public func entry(_ key: String, asOf position: LogPosition) throws -> (seq: UInt64, entry: LogState.Entry?) {
        let keyBytes = try Self.nonEmpty(key)
        return try environment.read { txn in try PastState(tables: tables).entry(txn, key: keyBytes, asOf: position) }
    }

    /// The last seq appended (0 for an empty log).
    public func lastSeq() throws -> UInt64 {
        try environment.read { txn in try tables.counters.lastSeq(txn) }
    }

    /// The seq the history starts after: a compaction removed the history up to it
    /// (``CompactionReport/firstAvailable``); 0 when nothing was compacted. The state as of it is
    /// the earliest ``state(asOf:)`` answers; records kept at or before it are not history.
    public func compactionBase() throws -> UInt64 {
        try environment.read { txn in try tables.counters.baseSeq(txn) }
    }

    /// Flushes unsynced commits to disk (for ``Durability/unsynced``).
    public func sync() throws {
        try environment.sync()
    }

    /// The longest key, in UTF-8 bytes, that this database accepts.
    public var maxKeySize: Int { environment.maxKeySize }

    /// Whether this instance only reads (``Options/readOnly``): appends throw ``CacheLogError/readOnly``.
    public var isReadOnly: Bool { environment.readOnly }

    // MARK: Reading the history

    /// Calls `body` with every record the query selects, in seq order (or reverse), until the
    /// query's limit or `body` returns false.
    ///
    /// Corrupt records are delivered as ``LogItem/corrupt(seq:detail:)`` whatever the kinds asked
    /// for, and iteration goes on. With a key, the key index picks the key's own records, at a
    /// cost that grows with the key's history, not the log's.
    public func forEachEvent(_ query: EventQuery = EventQuery(), _ body: (LogItem) throws -> Bool) throws {
        try reader.forEach(query, body)
    }

    /// Every record the query selects, as an array. For large logs prefer ``forEachEvent(_:_:)``.
    public func events(_ query: EventQuery = EventQuery()) throws -> [LogItem] {
        var items: [LogItem] = []
        try forEachEvent(query) { items.append($0); return true }
        return items
    }

    /// Delivers the records the query selects, then the new ones as they are appended (by any
    /// process), until the task is cancelled, `query.limit` were delivered, or the log passed
    /// `query.to`. `query.reverse` is ignored.
    ///
    /// With `query.to` a seq, the stream ends once that seq is in the log (after delivering it,
    /// if selected); with a date, once the log holds an event recorded after it or the clock
    /// (``Options/clock``) is past it, since recorded time never goes backward.
    public func follow(_ query: EventQuery = EventQuery(), pollInterval: Duration = .milliseconds(50)) -> AsyncThrowingStream<LogItem, any Error> {
        reader.follow(query, pollInterval: pollInterval)
    }

    /// Every key the log holds a record of (live or not), in byte order, optionally only those
    /// starting with `prefix` (compared as UTF-8 bytes, as the log keys them): one row of the key
    /// index per key (a read-only open of a database from before the index scans the log).
    public func keys(withPrefix prefix: String = "") throws -> [String] {
        try KeyListing(environment: environment, tables: tables).keys(withPrefix: prefix)
    }

    /// How the last cache of `key` ended, when it has none live: the `delete` or `expire` that
    /// removed it, found through the key index; nil while it is live, when it never was, when the
    /// record cannot be read, and in a database with no key index. Throws ``CacheLogError/emptyKey``.
    public func ending(of key: String) throws -> KeyEnding? {
        try KeyListing(environment: environment, tables: tables).ending(of: try Self.nonEmpty(key))
    }

    /// Scans every record header (no payload is inflated) and reports counts and sizes.
    public func stats() throws -> LogStats {
        try LogStatsScan(environment: environment, tables: tables).stats()
    }

    // MARK: Upkeep

    /// Deletes each of `keys` that has a live entry when the deletes commit, with `reason`, in
    /// one append: all of them land or none does.
    ///
    /// A key with nothing live records nothing; two removals of one key at once record one delete.
    ///
    /// - Returns: the keys it deleted, in the order given, each once.
    /// - Throws: ``CacheLogError/emptyKey`` or ``CacheLogError/keyTooLong(length:maximum:)`` for a
    ///   key no database can hold, and what ``append(_:)-([Event])`` throws.
    @discardableResult
    public func deleteLive(_ keys: [String], reason: Event.DeletionReason = .explicit) async throws -> [String] {
        let batch = try ConditionalBatch.removal(of: keys, reason: reason, maxKeySize: maxKeySize)
        guard !batch.keys.isEmpty else { return [] }
        do {
            return batch.keys(notIn: try await preparation.append(batch.events, to: writer, conditions: batch.conditions).leftOut)
        } catch is SupersededBatch {
            return [] // Every key was left out: nothing was live.
        }
    }

    /// Checks every record (framing, checksum, inflate, kind, seq and time order), every
    /// checkpoint, the stored state against the fold of the log, and the key index and `refs`
    /// against the records they list.
    ///
    /// It checks one snapshot, in one read transaction, while appends go on; without the lock
    /// file, a private copy of the newest commit (``Options/readOnly``).
    ///
    /// - Throws: ``CacheLogError/damaged(path:page:detail:)`` when a page is not one LMDB could follow.
    public func verify() throws -> VerifyReport {
        try Verification.report(environment, tables, path: path)
    }

    /// Drops the stored state and checkpoints and rebuilds them from the log alone, reading
    /// record headers only (no payload is inflated).
    ///
    /// The result is identical to what the appends maintained, which ``verify()`` checks.
    ///
    /// - Throws: ``CacheLogError/readOnly`` on a read-only log, and what a write throws.
    @discardableResult
    public func rebuildState() async throws -> RebuildReport {
        let (tables, environment) = (self.tables, self.environment)
        let report = try await writer.exclusive { try environment.write { txn in try StateRebuild(tables: tables).rebuild(txn) } }
        if !report.corruptSeqs.isEmpty {
            logger.warning("rebuild skipped corrupt records", metadata: ["seqs": "\(report.corruptSeqs)"])
        }
        return report
    }

    /// Removes the history before `position` (a seq, or the first event recorded at or after a
    /// date), keeping every record the live state references, so `retrieve` keeps working.
    ///
    /// State as of any seq from the cut on stays available; earlier points report
    /// ``CacheLogError/historyCompacted(firstAvailable:)``. Throws ``CacheLogError/readOnly`` on a
    /// read-only log.
    @discardableResult
    public func compact(before position: LogPosition) async throws -> CompactionReport {
        let (tables, environment, logDamaged) = (self.tables, self.environment, self.logDamagedRows)
        return try await writer.exclusive {
            try environment.write { txn in try Compaction(tables: tables).compact(txn, before: position, onDamaged: logDamaged) }
        }
    }

    // MARK: Retention

    /// The policy this database follows, its record, the bytes in use and the last pass, in one read.
    public func retentionStatus() throws -> RetentionStatus {
        try environment.read { txn in try RetentionStatus(txn, tables: tables) }
    }

    /// The retention policy this database follows, and the seq of the record that set it (nil:
    /// none is recorded, and ``RetentionPolicy/default`` applies).
    package func retentionPolicy() throws -> (policy: RetentionPolicy, seq: UInt64?) {
        try environment.read { txn in try Retention(tables: tables).policy(txn) }
    }

    /// Records `policy` as this database's retention policy, set by `by` (shown by `replay`):
    /// from its commit on, every process that writes applies it. Returns the record's seq.
    ///
    /// - Throws: ``CacheLogError/invalidRetention(detail:)`` for a policy that cannot be
    ///   recorded (``RetentionPolicy/problem``), and what ``append(_:)-([Event])`` throws.
    @discardableResult
    public func setRetentionPolicy(_ policy: RetentionPolicy, by: String) async throws -> UInt64 {
        try await append(.retention(policy, by: by))
    }

    /// Applies the retention policy now, to the end of a pass: history outside the windows goes,
    /// then, over the size limit, the oldest history and live entries.
    ///
    /// The writer runs the same passes as appends go; a pass under way is finished first.
    ///
    /// - Returns: every pass this call ran, in one report: the rest of a pass under way, one that
    ///   ended before its turn on the writer, and the pass at now.
    /// - Throws: ``CacheLogError/readOnly`` on a read-only log, and what a write throws.
    @discardableResult
    public func applyRetention() async throws -> RetentionReport? {
        guard !environment.readOnly else { throw CacheLogError.readOnly }
        return try await writer.applyRetention()
    }

    /// Runs the retention pass that appends made due, to its end, when there is one and the log
    /// applies retention (``Options/automaticRetention``).
    ///
    /// The writer runs such passes in the background, a slice at a time; a process that saves and
    /// then ends at once (a tool, a cron job) calls this so that the pass is not left to the next.
    ///
    /// - Returns: what the pass did (as ``applyRetention()`` says), nil when none was due.
    /// - Throws: what a write throws.
    @discardableResult
    public func applyRetentionIfDue() async throws -> RetentionReport? {
        guard !environment.readOnly else { return nil }
        return try await writer.applyRetention(onlyIfDue: true)
    }

    /// Every key whose history retention trimmed, with the seq it now starts at (see
    /// ``historyStart(of:)``), keyed by the key's UTF-8 bytes.
    package func trimmedHistories() throws -> [[UInt8]: UInt64] {
        try environment.read { txn in try Retention(tables: tables).historyStarts(txn) }
    }

    /// Where the history of `key` starts: the seq before which a compaction
    /// (``compactionBase()``) or retention removed its records. The record at that seq, when it
    /// is stored, is the version the history starts from, not a change within it.
    public func historyStart(of key: String) throws -> UInt64 {
        try environment.read { txn in
            max(try tables.counters.baseSeq(txn), try Retention(tables: tables).historyStart(txn, key: Array(key.utf8)))
        }
    }
}
