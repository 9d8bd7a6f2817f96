#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Readies a batch for the writer on the appending task: validates and compresses its events,
/// stores its puts as deltas where ``DeltaDecision`` says so, and remembers what was stored.
struct PutPreparation: Sendable {
    let environment: Environment
    let tables: LogTables
    let recentPayloads: RecentPayloads
    let level: Int32

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

    /// Prepares `events` announced to `writer` (``Writer/expectAppend()``, so that a commit
    /// starting meanwhile waits for them), appends them under `conditions`, and remembers the
    /// payloads of the puts it stored.
    ///
    /// - Throws: what ``prepare(_:)`` and the writer's append throw.
    func append(_ events: [Event], to writer: Writer, conditions: [AppendCondition] = []) async throws -> AppendedBatch {
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

    /// Validates and compresses a batch before it queues for the writer, and makes the deltas its
    /// puts may be stored as (a put stored as a delta is not compressed whole).
    ///
    /// - Parameter events: The batch, in order.
    /// - Throws: ``CacheLogError/readOnly``, ``CacheLogError/emptyBatch``, or what framing an
    ///   event throws (a key or payload too large, invalid metadata).
    func prepare(_ events: [Event]) throws -> PreparedBatch {
        guard !environment.readOnly else { throw CacheLogError.readOnly }
        guard !events.isEmpty else { throw CacheLogError.emptyBatch }
        var prepared = try events.map { event in
            var deltaSized = false
            if case .put(_, let payload, _, _, _) = event { deltaSized = DeltaDecision.sizes.contains(payload.count) }
            return try EventCodec.prepare(event, maxKeySize: environment.maxKeySize, level: level, compressing: !deltaSized)
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

    /// Remembers the payloads a committed batch saved (``RecentPayloads``).
    ///
    /// For each key it keeps the last put in the batch (the one live after it), with the seq and
    /// CRC-32 the writer stored it with. A last put stored as a reference leaves what is
    /// remembered as it is (the version it refers to is still the live payload's record); a key
    /// whose last put the writer left out, or whose payload was not kept, is forgotten.
    ///
    /// - Parameters:
    ///   - versions: The batch's puts, from ``prepare(_:)``.
    ///   - puts: What the writer stored of them.
    func remember(_ versions: [PendingVersion], storedAs puts: [StoredPut]) {
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

    /// Gives each put prepared without its whole body (``DeltaDecision/sizes``) whose key has a
    /// live version what ``DeltaDecision`` decides. Nothing here can fail the append: what cannot
    /// be read leaves the put whole, and the writer uses a delta only while its base is the record
    /// it was made from. The live versions are read in one short read transaction, and a
    /// remembered one that is still live is not inflated again (``RecentPayloads``).
    private func addDeltas(to prepared: inout [EventCodec.Prepared]) {
        let candidates = prepared.indices.filter { prepared[$0].uncompressed != nil }
        guard !candidates.isEmpty else { return }
        let (tables, recentPayloads) = (self.tables, self.recentPayloads)
        let keys = candidates.map { prepared[$0].key }
        let bases: [PayloadReader.BaseVersion?] = (try? environment.read { txn in
            keys.map { key in
                let known = recentPayloads.version(of: key)
                let base = (try? tables.state.entry(txn, key: key)).flatMap {
                    tables.payloads.baseVersion(txn, key: key, payloadAt: $0.payloadSeq, known: known)
                }
                if let base, known?.seq != base.seq || known?.checksum != base.checksum {
                    recentPayloads.remember(RememberedPayload(payload: base.payload, seq: base.seq, checksum: base.checksum), of: key)
                }
                return base
            }
        }) ?? []
        for (index, base) in zip(candidates, bases) {
            guard let base, let payload = prepared[index].uncompressed else { continue }
            switch DeltaDecision.deciding(payload, against: base, level: level) {
            case .identical(let identical): prepared[index].identical = identical
            case .delta(let delta): prepared[index].delta = delta
            case .whole: break
            }
        }
    }
}
