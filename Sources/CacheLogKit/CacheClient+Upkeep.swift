#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Upkeep: what the client removes and expires, on request or from a cron job.
extension CacheClient {
    /// Removes what is cached under `key`.
    ///
    /// It is TanStack Query's `removeQueries` and Apollo's `evict`: a delete in the log, with the
    /// reason `explicit`, so that the history says someone asked. The next load of the key asks
    /// the remote. Creates nothing.
    ///
    /// A load of the key under way when the removal commits still answers its callers, but its
    /// save is refused: what was fetched before the removal does not bring the cache back. Loads
    /// that begin later start their own request. Keys are compared as the log stores them,
    /// byte for byte: two spellings of one text (NFC and NFD) are two keys.
    ///
    /// - Parameter key: The cache key.
    /// - Returns: whether there was a cache to remove; `false` records nothing.
    /// - Throws: `CacheLogError` when the key is one no database can hold, or the log fails.
    @discardableResult
    public func remove(_ key: String) async throws -> Bool {
        guard let log = try opener.existingForWriting() else { return false }
        defer { inFlight.startAfresh(key) }
        return try await !log.deleteLive([key]).isEmpty
    }

    /// Removes every cache in the database (feeds, searches, objects, images) in one append:
    /// each key a delete with the reason `explicit`; the history stays, as retention keeps it.
    ///
    /// - Returns: the keys removed.
    /// - Throws: `CacheLogError` when the log fails.
    @discardableResult
    public func removeAll() async throws -> [String] {
        guard let log = try opener.existingForWriting() else { return [] }
        let removed = try await log.deleteLive(log.state().entries.map(\.key))
        for key in removed { inFlight.startAfresh(key) }
        return removed
    }

    /// The validate-cache use case over `key`, or over every live key: the cron job.
    ///
    /// Each key is judged by the policy its cache was saved under (`RecordedPolicy`; 7 days for
    /// a cache saved before puts recorded one), or by `maxAge` for every key when given. A cache
    /// that old is expired (an expire event removes it); one that cannot be read back, or whose
    /// payload fails a contract this package itself wrote and knows, is deleted (reason
    /// `retrieval-error`); every other contract is an app's, judged by age alone, so a valid
    /// cache is never deleted. A key whose write fails is reported and the others go on.
    ///
    /// - Parameters:
    ///   - key: only this key; all live keys when `nil`.
    ///   - maxAge: one max age for every key instead of each one's recorded policy.
    ///   - dryRun: judge and report, write nothing.
    /// - Returns: an outcome per key, in key order; none when there is no database yet (nothing
    ///   is created).
    /// - Throws: `CacheLogError`: `.readOnly` for a validation that would write through a client
    ///   opened to read only, `.notWritable(path:reason:)` when this user or its file system
    ///   cannot write the database, and what opening or reading the log throws. A key whose
    ///   write fails is not thrown: its outcome is ``ValidationOutcome/Kind/failed``.
    public func validate(key: String? = nil, maxAge: MaxAge? = nil, dryRun: Bool = false) async throws -> [ValidationOutcome] {
        guard let log = try opener.existing() else { return [] }
        // A database this user cannot write was opened to read (its caches still serve); a
        // validation that would write says so once, rather than failing each key.
        if log.isReadOnly && !dryRun && !opener.readOnlyByChoice {
            try opener.refuseWritesByDenial(log)
            throw CacheLogError.readOnly
        }
        // A client that asked to read only, sharing the log of one that writes (`EventLog.shared`).
        if opener.readOnlyByChoice && !dryRun && !log.isReadOnly { throw CacheLogError.readOnly }
        let keys = try key.map { [$0] } ?? log.state().entries.map(\.key)
        var outcomes: [ValidationOutcome] = []
        for key in keys {
            do {
                outcomes.append(try await validate(key, in: log, maxAge: maxAge, dryRun: dryRun))
            } catch {
                outcomes.append(ValidationOutcome(key: key, outcome: .failed, detail: "\(error)", dryRun: dryRun))
            }
        }
        return outcomes
    }

    private func validate(_ key: String, in log: EventLog, maxAge: MaxAge?, dryRun: Bool) async throws -> ValidationOutcome {
        let now = clock()
        let before = try log.entry(key)
        let recorded = before.map(RecordedPolicy.init(of:))
        let policy = maxAge ?? recorded?.maxAge ?? RecordedPolicy.unrecorded.maxAge
        let checked = recorded?.contract.flatMap(BuiltInContract.checkingCoder)
        let store = RecordingFeedStore(CacheLogFeedStore(log: log, key: key), dryRun: dryRun)
        try await LocalFeedLoader(
            store: store, currentDate: { now }, policy: CachePolicy(maxAge: maxAge ?? RecordedPolicy.unrecorded.maxAge),
            coder: checked ?? .bytes, judging: maxAge == nil ? .recordedPolicy : .ownPolicy, logger: logger
        ).validateCache()

        func outcome(_ kind: ValidationOutcome.Kind, _ detail: String) -> ValidationOutcome {
            ValidationOutcome(
                key: key, outcome: kind, detail: detail, timestamp: before?.timestamp, age: before.map { now.timeIntervalSince($0.timestamp) },
                maxAge: before.map { _ in policy.timeInterval }, seq: before?.seq, dryRun: dryRun)
        }
        let age = before.map {
            "cached \(TimestampText.string($0.timestamp)), \(DurationText.string(now.timeIntervalSince($0.timestamp))) old, max age \(policy)"
        }
        // Where the write landed; a dry run wrote nothing.
        func written(_ verb: String) throws -> String {
            guard !dryRun else { return "nothing written" }
            let last = try log.events(EventQuery(key: key, reverse: true, limit: 1)).first
            return "\(verb) at seq \(last?.seq ?? 0)"
        }
        switch await store.writes.last {
        case .delete?:
            let why = Self.readsBack(before, key: key, in: log) ? "not a valid \(recorded?.contract?.name ?? "") payload" : "unreadable"
            return outcome(.deleted, "\(why); \(try written("deleted"))")
        case .expire?:
            // A dry run only planned the expire: nothing was expired to count.
            if !dryRun { metrics.count(CacheMetrics.Label.expires, contract: recorded?.contract) }
            return outcome(.expired, "\(age ?? "no cache"); \(try written("expired"))")
        default:
            guard let age else { return ValidationOutcome(key: key, outcome: .empty, detail: "no cache", dryRun: dryRun) }
            return outcome(.fresh, age)
        }
    }

    /// Whether the put that held `entry` reads back whole: asked only after validation deleted
    /// the cache, to say why (the put stays in the log). A cache that read back was deleted
    /// because its payload does not decode under its contract.
    private static func readsBack(_ entry: LogState.Entry?, key: String, in log: EventLog) -> Bool {
        guard let entry,
              case .event(let put)? = try? log.events(EventQuery(from: .seq(entry.seq), to: .seq(entry.seq), includePayload: true)).first
        else { return false }
        return put.kind == .put && put.key.utf8.elementsEqual(key.utf8) && put.payload != nil
    }
}
