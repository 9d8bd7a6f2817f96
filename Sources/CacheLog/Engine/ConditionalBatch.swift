/// A batch appended under conditions, built from the caller's keys: a save that gives way to a
/// newer cache, or deletes that record only what is live.
struct ConditionalBatch {
    var events: [Event]
    var conditions: [AppendCondition]
    /// The keys the batch is about, each once, in the order given.
    var keys: [(name: String, bytes: [UInt8])]

    /// A save of `key`, and of `others` from the same fetch, which began when the log's last seq
    /// was `position`: each put of those keys records it, and each key is judged on its own.
    ///
    /// - Throws: ``CacheLogError/emptyKey`` or ``CacheLogError/keyTooLong(length:maximum:)`` for
    ///   `key`, and ``CacheLogError/emptyBatch`` when `others` are given and no event is about `key`.
    static func save(_ events: [Event], since position: UInt64, key: String, others: [String], maxKeySize: Int) throws -> ConditionalBatch {
        let keyBytes = try checkedKey(key, maxKeySize: maxKeySize)
        // With others, the batch must keep events of its own key whatever their conditions leave out.
        guard others.isEmpty || events.contains(where: { $0.key.utf8.elementsEqual(keyBytes) }) else { throw CacheLogError.emptyBatch }
        // Keys are bytes: two spellings of one text (NFC and NFD) are two keys, each judged alone.
        // A set beside the ordered keys: a search saves an object per result, and looking each
        // up in the list made a save of 2,000 results take seconds.
        var judged = [(name: key, bytes: keyBytes)]
        var isJudged: Set<[UInt8]> = [keyBytes]
        for other in others {
            let bytes = Array(other.utf8)
            if isJudged.insert(bytes).inserted { judged.append((other, bytes)) }
        }
        let recorded = events.map { event in
            isJudged.contains(Array(event.key.utf8)) ? event.recording(since: position) : event
        }
        let conditions = judged.enumerated().map { index, key in
            AppendCondition(key: key.bytes, since: position, wholeBatch: index == 0)
        }
        return ConditionalBatch(events: recorded, conditions: conditions, keys: judged)
    }

    /// A delete, with `reason`, of each of `keys` that is live when the batch commits.
    ///
    /// - Throws: ``CacheLogError/emptyKey`` or ``CacheLogError/keyTooLong(length:maximum:)``.
    static func removal(of keys: [String], reason: Event.DeletionReason, maxKeySize: Int) throws -> ConditionalBatch {
        var unique: [(name: String, bytes: [UInt8])] = []
        var seen = Set<[UInt8]>()
        for key in keys {
            let bytes = try checkedKey(key, maxKeySize: maxKeySize)
            if seen.insert(bytes).inserted { unique.append((key, bytes)) }
        }
        return ConditionalBatch(
            events: unique.map { Event.delete(key: $0.name, reason: reason) },
            conditions: unique.map { AppendCondition(key: $0.bytes, since: 0, wholeBatch: false, requiresLive: true) },
            keys: unique)
    }

    /// The names of the keys the batch is about that the writer did not leave out.
    func keys(notIn leftOut: [[UInt8]]) -> [String] {
        let leftOut = Set(leftOut)
        return keys.filter { !leftOut.contains($0.bytes) }.map(\.name)
    }

    /// The UTF-8 bytes of `key`, when a database can hold it.
    static func checkedKey(_ key: String, maxKeySize: Int) throws -> [UInt8] {
        let bytes = Array(key.utf8)
        guard !bytes.isEmpty else { throw CacheLogError.emptyKey }
        guard bytes.count <= maxKeySize else { throw CacheLogError.keyTooLong(length: bytes.count, maximum: maxKeySize) }
        return bytes
    }
}
