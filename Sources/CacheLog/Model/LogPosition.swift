import Foundation

/// A point in the log: a sequence number, or a wall-clock date matched against `recordedAt`.
public enum LogPosition: Sendable, Hashable {
    case seq(UInt64)
    case date(Date)
}
