#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns what a reader asks for (a seq, a date, ``LogPosition``) into the seq of the log it means.
struct LogPositions {
    /// The table handles.
    let schema: Tables
    /// The counters in `meta`.
    let counters: MetaCounters


    /// The seq of the record at or after `seq` and its recorded time.
    ///
    /// Only the recorded time is needed, and it sits at a fixed offset of the header: a record
    /// whose framing is damaged elsewhere still says when it was appended, and one whose time
    /// is unreadable or not a number is passed over, so that one bad record does not fail
    /// every question asked by date.
    private func record(_ txn: Transaction, atLeast seq: UInt64) throws -> (UInt64, Double)? {
        try txn.withCursor(schema.events, from: .atLeast(SeqKey.bytes(seq))) { rows in
            while let row = try rows.next(), let at = SeqKey.decode(row.key) {
                if let recordedAt = EventCodec.recordedAt(row.value), recordedAt.isFinite { return (at, recordedAt) }
            }
            return nil
        }
    }

    /// The first seq recorded at or after `date` (lastSeq + 1 when there is none).
    /// Recorded times never decrease along the log, so this is a binary search.
    func firstSeq(_ txn: Transaction, recordedAtOrAfter date: Date) throws -> UInt64 {
        let target = date.stamp
        var low: UInt64 = 1
        var high = try counters.lastSeq(txn) + 1
        while low < high {
            let mid = low + (high - low) / 2
            guard let (at, recordedAt) = try record(txn, atLeast: mid) else { high = mid; continue }
            if recordedAt >= target { high = mid } else { low = at + 1 }
        }
        return low
    }

    /// The last seq recorded at or before `date` (0 when there is none).
    func lastSeq(_ txn: Transaction, recordedAtOrBefore date: Date) throws -> UInt64 {
        // The first seq after the date, minus one: seqs are dense except for compacted history,
        // whose removed records cannot be asked for anyway.
        return try firstSeq(txn, recordedAtOrAfter: Date(stamp: date.stamp.nextUp)) - 1
    }

    func resolve(_ txn: Transaction, _ position: LogPosition, upperBound: Bool) throws -> UInt64 {
        switch position {
        case .seq(let seq): return seq
        case .date(let date):
            return upperBound ? try lastSeq(txn, recordedAtOrBefore: date) : try firstSeq(txn, recordedAtOrAfter: date)
        }
    }
}
