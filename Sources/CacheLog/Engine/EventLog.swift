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
    /// Validates and compresses what is appended, before it queues for the writer.
    let preparation: PutPreparation

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
        try LogOpening.prepareDirectory(path, options)
        let canonical = OpenPaths.canonical(path)
        try OpenPaths.claim(canonical)
        func openEnvironment() throws -> Environment {
            if !options.readOnly { try LogOpening.refuseEmptyDataFile(in: path) }
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
        preparation = PutPreparation(environment: environment, tables: tables, recentPayloads: recentPayloads, level: compressionLevel)
        writer = Writer(environment: environment, tables: tables, clock: options.clock,
                        appliesRetention: options.automaticRetention && !options.readOnly)
        if !options.readOnly && environment.tables.stampedFormat < Environment.formatVersion {
            try LogOpening.upgradeFormat(environment, tables, logger: logger)
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
        let batch: PutPreparation.PreparedBatch
        do {
            batch = try preparation.prepare(events)
        } catch {
            writer.cancelExpectedAppend()
            throw error
        }
        let appended = try await writer.append(batch.events, conditions: conditions, expected: true)
        preparation.remember(batch.versions, storedAs: appended.puts)
        return appended
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
            guard let entry = try tables.state.entry(txn, key: keyBytes, onDamaged: logDamagedRows) else { return nil }
            if let value = try storedValue(txn, entry, key: keyBytes, unlessPayloadIs: known) { return value }
            logDamagedRows([key])
            // The row names a cache the log does not hold: it cannot be read back, which
            // validation answers with a delete that also removes the row.
            guard let folded = try tables.state.foldedEntry(txn, key: keyBytes) else { throw CacheLogError.corruptStateRow(key: key) }
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
        guard let record = try txn.get(tables.schema.events, SeqKey.bytes(entry.seq)) else {
            throw CacheLogError.corruptRecord(seq: entry.seq, detail: "the live record is missing")
        }
        let header = try EventCodec.decodeHeader(record, seq: entry.seq)
        guard header.kind == .put, EventCodec.keyBytes(header, in: record).elementsEqual(key) else { return nil }
        let payloadSeq = try EventCodec.payloadSeq(header, in: record, seq: entry.seq)
        let omitted = payloadSeq == known
        let payload = omitted ? Data() : try tables.payloads.payload(txn, header, in: record, seq: entry.seq, known: recentPayloads.version(of: key))
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
            guard let row = try tables.state.entry(txn, key: keyBytes, onDamaged: logDamagedRows) else { return nil }
            if let checked = try tables.state.checkedAgainstItsPut(row, key: keyBytes, txn) { return checked }
            logDamagedRows([key])
            return try tables.state.foldedEntry(txn, key: keyBytes).map { try tables.state.withRecordedPolicy($0, txn) }
        }
    }

    /// Whether the state holds a row for `key`: a live cache, or a row that damage left naming
    /// none (``entry(_:)`` then answers from the log). A delete or an expire of the key clears it.
    public func isLive(_ key: String) throws -> Bool {
        let keyBytes = Array(key.utf8)
        guard !keyBytes.isEmpty else { throw CacheLogError.emptyKey }
        return try environment.read { txn in try txn.get(tables.schema.state, keyBytes) != nil }
    }

    /// The state now.
    ///
    /// Reads survive a damaged row of the stored state: the answer then comes from the log
    /// itself, and the damage is logged; ``verify()`` names it, ``rebuildState()`` repairs it.
    public func state() throws -> LogState {
        try environment.read { txn in
            LogState(
                seq: try tables.counters.lastSeq(txn),
                entries: try tables.state.currentEntries(txn, onDamaged: logDamagedRows).map { try tables.state.withRecordedPolicy($0, txn) })
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
            let last = try tables.counters.lastSeq(txn)
            let seq = min(try tables.positions.resolve(txn, position, upperBound: true), last)
            var fold = try tables.state.foldedState(txn, asOf: seq)
            var state = fold.state(at: seq)
            // A key whose history retention trimmed past `seq` folds to a guess there: left out, and named.
            state.trimmed = try Retention(tables: tables).keysTrimmed(after: seq, txn).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            let trimmed = Set(state.trimmed.map { Array($0.utf8) })
            state.entries = try state.entries.filter { !trimmed.contains(Array($0.key.utf8)) }.map { try tables.state.withRecordedPolicy($0, txn) }
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
            let seq = min(try tables.positions.resolve(txn, position, upperBound: true), try tables.counters.lastSeq(txn))
            let trimmed = try Retention(tables: tables).historyStart(txn, key: keyBytes)
            guard seq >= trimmed else { throw CacheLogError.historyTrimmed(key: key, firstAvailable: trimmed) }
            let entry = try tables.keyIndex.foldedEntry(txn, key: keyBytes, asOf: seq).map { try tables.state.withRecordedPolicy($0, txn) }
            return (seq, entry)
        }
    }

    /// The last seq appended (0 for an empty log).
    public func lastSeq() throws -> UInt64 {
        try environment.read { txn in try tables.counters.lastSeq(txn) }
    }

    /// The seq the history starts after: a compaction removed the history up to it
    /// (``CompactionReport/firstAvailable``); 0 when nothing was compacted.
    ///
    /// The state as of it is the earliest ``state(asOf:)`` answers. The records at or before it
    /// that are still stored were kept for that state or for the bytes a later put refers to:
    /// they are not the history of what happened before it, which is gone.
    public func compactionBase() throws -> UInt64 {
        try environment.read { txn in try tables.counters.baseSeq(txn) }
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
