#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A key's cache over a window of time as contiguous bands, each fresh, stale, missing or
/// "none yet", read off the key's audit timeline (``AuditTimeline``): the report draws the same
/// story the audit tells, judged by the same policy.
public struct CacheBands: Sendable, Equatable {
    /// What the key's cache was during a band. The raw values are what the report page's data
    /// carries.
    public enum State: Int, Sendable, CaseIterable {
        /// The key had no cache yet: before its first save (or only deletes of nothing).
        case none = 0
        /// A version younger than its max age was live.
        case fresh = 1
        /// The live version was past its max age.
        case stale = 2
        /// The cache was there once and is gone: expired or deleted.
        case missing = 3

        /// `none`, `fresh`, `stale` or `missing`.
        public var name: String {
            switch self {
            case .none: "none"
            case .fresh: "fresh"
            case .stale: "stale"
            case .missing: "missing"
            }
        }
    }

    /// A stretch of time in one state.
    public struct Band: Sendable, Equatable {
        /// When the band starts (inclusive).
        public var start: Date
        /// When it ends: where the next band starts, or the window's end.
        public var end: Date
        /// What the cache was.
        public var state: State

        /// A band; each parameter sets the property of its name.
        public init(start: Date, end: Date, state: State) {
            self.start = start
            self.end = end
            self.state = state
        }
    }

    /// Contiguous, in time order, covering the window; adjacent bands differ in state.
    public let bands: [Band]

    /// The bands of the timeline `entries` (``AuditTimeline/entries(_:now:)``) within `window`.
    /// The timeline before the window decides the state at its start.
    public init(_ entries: [AuditTimeline.Entry], window: DateInterval) {
        var changes: [(at: Date, state: State)] = []
        var live: UInt64?
        // A version can go stale at an instant before it was recorded (a what-if `--now` save
        // stamped earlier than the log's clock): the stale entry then sorts before its write.
        var staleEarly: [UInt64: Date] = [:]
        for entry in entries where entry.at.timeIntervalSince1970.isFinite {
            switch entry.kind {
            case .written, .replaced:
                live = entry.seq
                let early = entry.seq.flatMap { staleEarly[$0] }.map { $0 <= entry.at } ?? false
                changes.append((entry.at, early ? .stale : .fresh))
            case .stale:
                if let seq = entry.seq, seq == live {
                    changes.append((entry.at, .stale))
                } else if let seq = entry.seq {
                    staleEarly[seq] = entry.at
                }
            case .expired, .deleted:
                if live != nil { changes.append((entry.at, .missing)) }
                live = nil
            case .ignored, .gap, .corrupt:
                break
            }
        }
        var bands: [Band] = []
        var current = State.none
        var index = changes.startIndex
        while index < changes.endIndex, changes[index].at <= window.start {
            current = changes[index].state
            index += 1
        }
        var start = window.start
        for change in changes[index...] where change.at < window.end {
            if change.state != current {
                if change.at > start { bands.append(Band(start: start, end: change.at, state: current)) }
                start = change.at
                current = change.state
            }
        }
        bands.append(Band(start: start, end: window.end, state: current))
        // A change at the same instant as the one before leaves no band between them, so
        // neighbours can now share a state.
        self.bands = bands.reduce(into: []) { merged, band in
            if let last = merged.last, last.state == band.state {
                merged[merged.count - 1].end = band.end
            } else {
                merged.append(band)
            }
        }
    }

    /// How long the key spent in `state` within the window.
    public func duration(_ state: State) -> TimeInterval {
        bands.filter { $0.state == state }.reduce(0) { $0 + $1.end.timeIntervalSince($1.start) }
    }

    /// The state at the window's end (the last band's).
    public var last: State { bands.last?.state ?? .none }
}
