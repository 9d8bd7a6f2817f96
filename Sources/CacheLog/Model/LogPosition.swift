#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A point in the log: a sequence number, or a wall-clock date matched against `recordedAt`.
public enum LogPosition: Sendable, Hashable {
    /// The event with this sequence number.
    case seq(UInt64)
    /// A moment, compared with the time each event was recorded.
    case date(Date)
}
