#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Answers for a point in the past: the state, or one key's entry, right after a seq or the last
/// event recorded at or before a date, each entry with its put's policy.
struct PastState {
    let tables: LogTables

    /// The state right after `position`, from the nearest checkpoint plus the events after it.
    /// A key whose history retention trimmed past that point folds to a guess there: it is left
    /// out, and named in ``LogState/trimmed``.
    @available(*, noasync)
    func state(_ txn: Transaction, asOf position: LogPosition) throws -> LogState {
        let seq = try resolve(txn, position)
        var fold = try tables.state.foldedState(txn, asOf: seq)
        var state = fold.state(at: seq)
        state.trimmed = try Retention(tables: tables).keysTrimmed(after: seq, txn).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let trimmed = Set(state.trimmed.map { Array($0.utf8) })
        state.entries = try state.entries.filter { !trimmed.contains(Array($0.key.utf8)) }.map { try tables.state.withRecordedPolicy($0, txn) }
        return state
    }

    /// The live entry of `key` right after `position`, from the key index, and the seq that
    /// position is.
    ///
    /// - Throws: ``CacheLogError/historyTrimmed(key:firstAvailable:)`` when retention removed
    ///   the key's history at that point.
    @available(*, noasync)
    func entry(_ txn: Transaction, key: [UInt8], asOf position: LogPosition) throws -> (seq: UInt64, entry: LogState.Entry?) {
        let seq = try resolve(txn, position)
        let trimmed = try Retention(tables: tables).historyStart(txn, key: key)
        guard seq >= trimmed else { throw CacheLogError.historyTrimmed(key: String(decoding: key, as: UTF8.self), firstAvailable: trimmed) }
        let entry = try tables.keyIndex.foldedEntry(txn, key: key, asOf: seq).map { try tables.state.withRecordedPolicy($0, txn) }
        return (seq, entry)
    }

    /// The seq `position` is, at most the log's last.
    private func resolve(_ txn: Transaction, _ position: LogPosition) throws -> UInt64 {
        min(try tables.positions.resolve(txn, position, upperBound: true), try tables.counters.lastSeq(txn))
    }
}
