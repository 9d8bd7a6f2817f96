extension EventLog {
    /// Deletes each of `keys` that has a live entry when the deletes commit, with `reason`, in
    /// one append: all of them land or none does. A key with nothing live records nothing, and
    /// two removals of one key at once record one delete (the condition is judged inside the
    /// write transaction).
    ///
    /// - Returns: the keys it deleted, in the order given, each once.
    /// - Throws: ``CacheLogError/emptyKey`` or ``CacheLogError/keyTooLong(length:maximum:)`` for a
    ///   key no database can hold, and what ``append(_:)-([Event])`` throws.
    @discardableResult
    public func deleteLive(_ keys: [String], reason: Event.DeletionReason = .explicit) async throws -> [String] {
        var unique: [(key: String, bytes: [UInt8])] = []
        for key in keys {
            let bytes = Array(key.utf8)
            guard !bytes.isEmpty else { throw CacheLogError.emptyKey }
            guard bytes.count <= maxKeySize else { throw CacheLogError.keyTooLong(length: bytes.count, maximum: maxKeySize) }
            if !unique.contains(where: { $0.bytes == bytes }) { unique.append((key, bytes)) }
        }
        guard !unique.isEmpty else { return [] }
        let prepared = try preparation.prepare(unique.map { Event.delete(key: $0.key, reason: reason) }).events
        let conditions = unique.map { AppendCondition(key: $0.bytes, since: 0, wholeBatch: false, requiresLive: true) }
        do {
            let appended = try await writer.append(prepared, conditions: conditions)
            let leftOut = Set(appended.leftOut)
            return unique.filter { !leftOut.contains($0.bytes) }.map(\.key)
        } catch is SupersededBatch {
            // Every key was left out: nothing was live.
            return []
        }
    }
}
