#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The live value of a key, as ``EventLog/retrieve(_:)`` returns it.
public struct StoredValue: Sendable, Equatable {
    /// The bytes that were put, inflated; empty when the reader already held them
    /// (``isPayloadOmitted``).
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
    /// The seq of the record that holds the payload's bytes: ``seq`` itself, or an earlier put
    /// of the key with a byte-identical payload (stored once). Two values with one `payloadSeq`
    /// have equal payloads, so what a reader decoded from one holds for the other.
    public var payloadSeq: UInt64
    /// Whether ``payload`` was left out because it is the one the reader said it holds
    /// (``EventLog/retrieve(_:unlessPayloadIs:)``).
    public var isPayloadOmitted = false
}
