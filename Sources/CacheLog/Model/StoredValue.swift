#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The live value of a key, as ``EventLog/retrieve(_:)`` returns it.
public struct StoredValue: Sendable, Equatable {
    /// The bytes that were put, inflated.
    public var payload: Data
    /// The cache timestamp given when it was put.
    public var timestamp: Date
    /// The sequence number of the `put` event that holds it.
    public var seq: UInt64
    /// The maximum age, in seconds, it was saved under, when the put recorded one.
    public var maxAge: TimeInterval?
    /// The metadata it was saved with.
    public var metadata: [String: String] = [:]
    /// When its put was recorded in the log. A ``timestamp`` later than this was not taken by
    /// the clock that recorded the put, and cannot be trusted.
    public var recordedAt: Date
}
