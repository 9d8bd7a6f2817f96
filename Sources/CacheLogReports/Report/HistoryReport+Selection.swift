import CacheLog
import FeedCache
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FeedCacheLog

extension HistoryReport {
    /// Why a report's keys or window cannot be chosen as asked.
    public enum SelectionError: Error, Sendable, Equatable, CustomStringConvertible {
        /// A key asked for by name that the log never held.
        case unknownKey(String)
        /// No event at or after (for the window's start) or at or before (for its end) a seq.
        case noEvent(seq: UInt64, forEnd: Bool)
        /// The window would end before it starts.
        case emptyWindow(start: Date, end: Date)

        /// What is wrong, as a sentence.
        public var description: String {
            switch self {
            case .unknownKey(let key): "no key '\(KeyText.escaped(key))' in the log"
            case .noEvent(let seq, let forEnd):
                "no event \(forEnd ? "at or before" : "at or after") seq \(seq) to place the window's \(forEnd ? "end" : "start") at"
            case .emptyWindow(let start, let end):
                "the window is empty: it starts at \(TimestampText.string(start)) and ends at \(TimestampText.string(end))"
            }
        }
    }

    /// The keys a report draws: those `named` (each must be in the log) and those with `prefix`,
    /// every key when neither is given; in byte order, as the log keys them (NFC and NFD
    /// spellings are two keys).
    ///
    /// - Parameters:
    ///   - log: the log whose keys are selected.
    ///   - named: keys to draw, each of which must have an event in the log.
    ///   - prefix: draw every key that starts with it as well.
    /// - Throws: ``HistoryReport/SelectionError/unknownKey(_:)`` for a named key without events;
    ///   `CacheLogError` when the log cannot be read.
    public static func keys(in log: EventLog, named: [String] = [], prefix: String? = nil) throws -> [String] {
        for name in named where try log.events(EventQuery(key: name, limit: 1)).isEmpty {
            throw SelectionError.unknownKey(name)
        }
        if named.isEmpty && prefix == nil { return try log.keys() }
        let prefixed = try prefix.map { try log.keys(withPrefix: $0) } ?? []
        var seen = Set<[UInt8]>()
        return (named + prefixed).map { Array($0.utf8) }.filter { seen.insert($0).inserted }
            .sorted { $0.lexicographicallyPrecedes($1) }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The window a report of `keys` covers: from `from` (by default the first event of those
    /// keys, else `now`) to `to` (by default `now`).
    ///
    /// A seq stands for when its event was recorded: the first event at or after it for the
    /// start, the last at or before it for the end.
    ///
    /// - Parameters:
    ///   - keys: the keys whose first event starts the window when `from` is `nil`.
    ///   - log: the log the seqs and first events are read from.
    ///   - from: where the window starts, as a date or a seq.
    ///   - to: where the window ends, as a date or a seq.
    ///   - now: the start when no key has events, and the end when `to` is `nil`.
    /// - Throws: ``HistoryReport/SelectionError/noEvent(seq:forEnd:)`` for a seq with no event to
    ///   place the window at, ``HistoryReport/SelectionError/emptyWindow(start:end:)`` for a
    ///   window that ends before it starts or whose start or end is not a finite date;
    ///   `CacheLogError` when the log cannot be read.
    public static func window(
        of keys: [String], in log: EventLog, from: LogPosition?, to: LogPosition?, now: Date
    ) throws -> DateInterval {
        let start = try from.map { try date(of: $0, in: log, forEnd: false) } ?? start(of: keys, in: log) ?? now
        let end = try to.map { try date(of: $0, in: log, forEnd: true) } ?? now
        guard start.timeIntervalSince1970.isFinite, end.timeIntervalSince1970.isFinite, start <= end else {
            throw SelectionError.emptyWindow(start: start, end: end)
        }
        return DateInterval(start: start, end: end)
    }

    private static func date(of position: LogPosition, in log: EventLog, forEnd: Bool) throws -> Date {
        let seq: UInt64
        switch position {
        case .date(let date): return date
        case .seq(let value): seq = value
        }
        let query = forEnd ? EventQuery(to: .seq(seq), reverse: true, limit: 1) : EventQuery(from: .seq(seq), limit: 1)
        for item in try log.events(query) {
            if case .event(let event) = item { return event.recordedAt }
        }
        throw SelectionError.noEvent(seq: seq, forEnd: forEnd)
    }
}

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do). Without these it reads
// "The operation could not be completed. (… error 1.)", not the sentence `description` gives.

extension HistoryReport.SelectionError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
