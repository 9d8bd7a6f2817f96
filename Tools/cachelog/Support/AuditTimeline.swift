import CacheLog
import FeedCache
import Foundation

/// Turns one key's events into the story of its cache: each version written, when it went stale
/// under its policy, when and why it was replaced, expired or deleted, and the gaps with no cache.
struct AuditTimeline {
    /// One line of the story; `audit --format json` shows it as `{"at", "kind", "seq", "text"}`.
    struct Entry: Equatable, Encodable {
        enum Kind: String, Encodable { case written, stale, replaced, expired, deleted, ignored, gap, corrupt }
        var at: Date
        var kind: Kind
        @NullWhenNil var seq: UInt64?
        var text: String
    }

    /// One max age for every version; `nil`: each version's recorded policy (``KeyPolicy``).
    let maxAge: MaxAge?

    init(maxAge: MaxAge?) { self.maxAge = maxAge }

    /// The max age that judges the version `put` wrote.
    func maxAge(of put: RecordedEvent) -> MaxAge {
        maxAge ?? KeyPolicy.of(put)?.maxAge ?? KeyPolicy.unrecorded.maxAge
    }

    /// When the version `put` wrote went stale, by the same rule the cache itself uses; `nil`
    /// for a timestamp that is not a finite date (such a version never was fresh).
    func staleDate(_ put: RecordedEvent) -> Date? {
        put.timestamp.flatMap(CachePolicy(maxAge: maxAge(of: put)).expiry)
    }

    func build(_ events: [RecordedEvent], now: Date) -> [Entry] {
        var entries: [Entry] = []
        var live: RecordedEvent?
        var goneSince: Date?

        /// Reports the live version going stale, if it did before `date`.
        func staleBefore(_ date: Date) {
            guard let current = live, let stale = staleDate(current) else { return }
            if stale <= date {
                entries.append(Entry(at: stale, kind: .stale, seq: current.seq,
                                     text: "seq \(current.seq) became stale (max age \(maxAge(of: current)))"))
            }
        }

        for event in events {
            switch event.kind {
            case .put:
                if let since = goneSince {
                    entries.append(Entry(at: since, kind: .gap, seq: nil,
                                         text: "no cache for \(DurationText.string(event.recordedAt.timeIntervalSince(since)))"))
                    goneSince = nil
                }
                staleBefore(event.recordedAt)
                let cached = event.timestamp.map(DateParsing.string) ?? "?"
                // A put over a live version replaces it, with or without a delete in front: a
                // save deletes first, a refresh after a 304 does not.
                if let previous = live {
                    entries.append(Entry(at: event.recordedAt, kind: .replaced, seq: event.seq,
                                         text: "written (cached \(cached), \(event.payloadBytes) bytes), replacing seq \(previous.seq)"))
                } else {
                    entries.append(Entry(at: event.recordedAt, kind: .written, seq: event.seq,
                                         text: "written (cached \(cached), \(event.payloadBytes) bytes)"))
                }
                live = event
            case .delete where event.reason == .replaced:
                // The first half of a save: the put that follows tells the story.
                break
            case .delete:
                staleBefore(event.recordedAt)
                entries.append(Entry(at: event.recordedAt, kind: .deleted, seq: event.seq,
                                     text: "deleted (\(event.reason?.name ?? "unknown"))\(live.map { ", was seq \($0.seq)" } ?? "")"))
                if live != nil { goneSince = event.recordedAt }
                live = nil
            case .expire:
                let judged = event.timestamp.map(DateParsing.string) ?? "?"
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
            let span = now >= since ? DurationText.string(now.timeIntervalSince(since)) : "the clock reads \(DateParsing.string(now)), earlier"
            entries.append(Entry(at: since, kind: .gap, seq: nil, text: "no cache since then (\(span))"))
        }
        // In time order; entries at the same instant keep the order they happened in. A record
        // may hold a NaN date, which `<` cannot order: NaN dates go last, in the order they happened.
        return entries.enumerated().sorted { Self.order($0.element.at, $0.offset) < Self.order($1.element.at, $1.offset) }.map(\.element)
    }

    private static func order(_ date: Date, _ offset: Int) -> (Int, Double, Int) {
        let seconds = date.timeIntervalSinceReferenceDate
        return seconds.isNaN ? (1, 0, offset) : (0, seconds, offset)
    }
}
