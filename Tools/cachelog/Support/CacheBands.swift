import Foundation

/// A key's cache over a window of time as contiguous bands, each fresh, stale, missing or
/// "none yet", read off the key's audit timeline (``AuditTimeline``): the report draws the same
/// story `audit` tells, judged by the same policy.
struct CacheBands {
    /// The raw values are what the report page's data carries.
    enum State: Int, Encodable, CaseIterable {
        /// The key had no cache yet: before its first save (or only deletes of nothing).
        case none = 0
        case fresh = 1
        case stale = 2
        /// The cache was there once and is gone: expired or deleted.
        case missing = 3

        var name: String {
            switch self {
            case .none: "none"
            case .fresh: "fresh"
            case .stale: "stale"
            case .missing: "missing"
            }
        }
    }

    struct Band: Equatable {
        var start: Date
        var end: Date
        var state: State
    }

    /// Contiguous, in time order, covering the window; adjacent bands differ in state.
    let bands: [Band]

    init(_ entries: [AuditTimeline.Entry], window: DateInterval) {
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
    func duration(_ state: State) -> TimeInterval {
        bands.filter { $0.state == state }.reduce(0) { $0 + $1.end.timeIntervalSince($1.start) }
    }

    /// The state at the window's end (the last band's).
    var last: State { bands.last?.state ?? .none }
}
