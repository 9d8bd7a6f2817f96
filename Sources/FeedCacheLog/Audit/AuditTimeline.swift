import CacheLog
import FeedCache
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns one key's history into the story of its cache: each version written, when it went stale
/// under its policy, when and why it was replaced, expired or deleted, and the gaps with no cache.
///
/// The story starts at the compaction base (see ``KeyHistory``): the version live there, then what
/// happened after it.
public struct AuditTimeline: Sendable {
    /// One line of the story.
    public struct Entry: Sendable, Equatable, Encodable {
        /// What an entry tells.
        public enum Kind: String, Sendable, Encodable, CaseIterable {
            /// A version was written with no cache before it (or is the first the history has).
            case written
            /// The live version went past its max age.
            case stale
            /// A version was written over the live one.
            case replaced
            /// Validation found the live version too old and removed it.
            case expired
            /// The cache was deleted (explicitly, or as unreadable).
            case deleted
            /// An expire that came after the version it judged was replaced: it changed nothing.
            case ignored
            /// A time with no cache: from a delete or an expire to the next write, or to now.
            case gap
            /// A record that could not be read.
            case corrupt
        }

        /// When it happened: the event's recorded time, or the moment a version went stale.
        public var at: Date
        /// What happened.
        public var kind: Kind
        /// The seq of the event it tells of, or of the version that went stale; `nil` for a gap.
        public var seq: UInt64?
        /// The entry as a sentence (`seq 2 became stale (max age 1d)`).
        public var text: String

        /// An entry; each parameter sets the property of its name.
        public init(at: Date, kind: Kind, seq: UInt64?, text: String) {
            self.at = at
            self.kind = kind
            self.seq = seq
            self.text = text
        }

        private enum CodingKeys: String, CodingKey { case at, kind, seq, text }

        /// Encodes `{"at", "kind", "seq", "text"}`, with `seq` `null` rather than left out.
        ///
        /// - Throws: What `encoder` throws (an `EncodingError` for a value it cannot encode).
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(at, forKey: .at)
            try container.encode(kind, forKey: .kind)
            if let seq { try container.encode(seq, forKey: .seq) } else { try container.encodeNil(forKey: .seq) }
            try container.encode(text, forKey: .text)
        }
    }

    /// One max age for every version; `nil`: each version's recorded policy (`RecordedPolicy(of:)`).
    public let maxAge: MaxAge?

    /// A timeline that judges every version by `maxAge`, or each by its recorded policy when `nil`.
    public init(maxAge: MaxAge? = nil) { self.maxAge = maxAge }

    /// The max age that judges the version `put` wrote.
    public func maxAge(of put: RecordedEvent) -> MaxAge {
        maxAge ?? RecordedPolicy(of: put)?.maxAge ?? RecordedPolicy.unrecorded.maxAge
    }

    /// When the version `put` wrote went stale: its cache timestamp plus its max age, as the cache
    /// judges it, or the moment it was recorded when its timestamp is later than that (a timestamp
    /// from a clock ahead cannot be trusted: such a version was never fresh); `nil` for a
    /// timestamp that is not a finite date (such a version never was fresh either).
    public func staleDate(of put: RecordedEvent) -> Date? {
        put.timestamp.flatMap { Self.staleDate(cachedAt: $0, recordedAt: put.recordedAt, maxAge: maxAge(of: put)) }
    }

    /// The rule of ``staleDate(of:)`` on its own: the cache policy's, which counts the age of a
    /// timestamp later than its recording (a clock ahead, a record made by hand) from the
    /// recording (``CachePolicy/trustedTimestamp(_:recordedAt:)``).
    static func staleDate(cachedAt timestamp: Date, recordedAt: Date, maxAge: MaxAge) -> Date? {
        CachePolicy(maxAge: maxAge).expiry(of: CachePolicy.trustedTimestamp(timestamp, recordedAt: recordedAt))
    }

    /// The story of `history` up to `now`, in time order.
    public func entries(_ history: KeyHistory, now: Date) -> [Entry] {
        var entries: [Entry] = []
        var live: RecordedEvent?
        var goneSince: Date?

        /// Reports the live version going stale, if it did before `date`.
        func staleBefore(_ date: Date) {
            guard let current = live, let stale = staleDate(of: current) else { return }
            if stale <= date {
                entries.append(Entry(at: stale, kind: .stale, seq: current.seq,
                                     text: "seq \(current.seq) became stale (max age \(maxAge(of: current)))"))
            }
        }

        for event in history.events {
            switch event.kind {
            case .put where history.isBaseVersion(event):
                // The story before it is compacted or trimmed: it starts with the version live then.
                let why = event.seq <= history.compactionBase
                    ? "live when the history up to seq \(history.compactionBase) was compacted"
                    : "the history before it was trimmed by the retention policy"
                entries.append(Entry(at: event.recordedAt, kind: .written, seq: event.seq, text: "\(Self.written(event)); \(why)"))
                live = event
            case .put:
                if let since = goneSince {
                    entries.append(Entry(at: since, kind: .gap, seq: nil,
                                         text: "no cache for \(DurationText.string(event.recordedAt.timeIntervalSince(since)))"))
                    goneSince = nil
                }
                staleBefore(event.recordedAt)
                // A put over a live version replaces it, with or without a delete in front: a
                // save deletes first, a refresh after a 304 does not.
                if let previous = live {
                    entries.append(Entry(at: event.recordedAt, kind: .replaced, seq: event.seq,
                                         text: "\(Self.written(event)), replacing seq \(previous.seq)"))
                } else {
                    entries.append(Entry(at: event.recordedAt, kind: .written, seq: event.seq, text: Self.written(event)))
                }
                live = event
            case .delete where history.isBaseVersion(event) && event.reason != .replaced, .expire where history.isBaseVersion(event):
                // Retention trimmed the history to the record that left no cache: the story
                // starts with the cache gone, and why.
                let what = event.kind == .delete ? "deleted (\(event.reason?.name ?? "unknown"))" : "expired by validation"
                entries.append(Entry(at: event.recordedAt, kind: event.kind == .delete ? .deleted : .expired, seq: event.seq,
                                     text: "\(what); the history before it was trimmed by the retention policy"))
                goneSince = event.recordedAt
            case .delete where event.reason == .replaced:
                // The first half of a save: the put that follows tells the story.
                break
            case .delete:
                staleBefore(event.recordedAt)
                entries.append(Entry(at: event.recordedAt, kind: .deleted, seq: event.seq,
                                     text: "deleted (\(event.reason?.name ?? "unknown"))\(live.map { ", was seq \($0.seq)" } ?? "")"))
                if live != nil { goneSince = event.recordedAt }
                live = nil
            case .retention:
                // About no key: a key's history never holds one.
                break
            case .expire:
                let judged = event.timestamp.map(TimestampText.string) ?? "?"
                if let current = live, current.timestamp == event.timestamp {
                    staleBefore(event.recordedAt)
                    entries.append(Entry(at: event.recordedAt, kind: .expired, seq: event.seq,
                                         text: "expired by validation (cached \(judged), max age \(DurationText.string(event.maxAge ?? 0)))"))
                    live = nil
                    goneSince = event.recordedAt
                } else {
                    entries.append(Entry(at: event.recordedAt, kind: .ignored, seq: event.seq,
                                         text: "expire of the version cached \(judged) came after it was replaced; no effect"))
                }
            }
        }
        staleBefore(now)
        if let since = goneSince {
            // The clock may read earlier than the log (events recorded with a later --now, or a
            // clock set back): a negative "since" would read as nonsense, so say what happened.
            let span = now >= since ? DurationText.string(now.timeIntervalSince(since)) : "the clock reads \(TimestampText.string(now)), earlier"
            entries.append(Entry(at: since, kind: .gap, seq: nil, text: "no cache since then (\(span))"))
        }
        // In time order; entries at the same instant keep the order they happened in. A record
        // may hold a NaN date, which `<` cannot order: NaN dates go last, in the order they happened.
        return entries.enumerated().sorted { Self.order($0.element.at, $0.offset) < Self.order($1.element.at, $1.offset) }.map(\.element)
    }

    /// `written (cached …, N bytes)`: what a put wrote.
    private static func written(_ put: RecordedEvent) -> String {
        let by = PutOrigin(metadata: put.metadata) == .written ? " by the app" : ""
        return "written\(by) (cached \(put.timestamp.map(TimestampText.string) ?? "?"), \(put.payloadBytes) bytes)"
    }

    private static func order(_ date: Date, _ offset: Int) -> (Int, Double, Int) {
        let seconds = date.timeIntervalSinceReferenceDate
        return seconds.isNaN ? (1, 0, offset) : (0, seconds, offset)
    }
}
