#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What validation did (or, in a dry run, would do) to one key.
public struct ValidationOutcome: Sendable, Equatable {
    /// What became of the key's cache.
    public enum Kind: String, Sendable, CaseIterable {
        /// Too old under its policy: an expire event removed it.
        case expired
        /// Unreadable, or its payload fails a contract this package wrote: deleted
        /// (reason `retrieval-error`).
        case deleted
        /// Fresh: left alone.
        case fresh
        /// Nothing cached under the key.
        case empty
        /// The key could not be validated (its write failed); the others went on.
        case failed
    }

    /// The cache key.
    public let key: String
    /// What became of it.
    public let outcome: Kind
    /// The facts as a sentence: `cached 2026-12-01T10:00:00Z, 8d old, max age 7d; expired at seq 3`.
    public let detail: String
    /// The judged cache's timestamp; `nil` when the key held no cache.
    public var timestamp: Date?
    /// Its age, in seconds, when it was judged.
    public var age: TimeInterval?
    /// The max age, in seconds, it was judged by.
    public var maxAge: TimeInterval?
    /// The seq of its put.
    public var seq: UInt64?
    /// Whether nothing was written (a dry run).
    public var dryRun: Bool

    /// An outcome; each parameter sets the property of its name.
    public init(
        key: String, outcome: Kind, detail: String, timestamp: Date? = nil, age: TimeInterval? = nil, maxAge: TimeInterval? = nil,
        seq: UInt64? = nil, dryRun: Bool = false
    ) {
        self.key = key
        self.outcome = outcome
        self.detail = detail
        self.timestamp = timestamp
        self.age = age
        self.maxAge = maxAge
        self.seq = seq
        self.dryRun = dryRun
    }

    /// Whether it is a change or a problem (what a quiet cron job reports).
    public var isNews: Bool { outcome != .fresh && outcome != .empty }
}

extension ValidationOutcome: Encodable {
    private enum CodingKeys: String, CodingKey { case key, outcome, detail, timestamp, age, maxAge, seq, dryRun }

    /// `{"key", "outcome", "detail", "timestamp", "age", "maxAge", "seq"}`, the facts `null` for a
    /// key that held no cache, and `"dryRun": true` in a dry run.
    ///
    /// - Throws: What `encoder` throws (an `EncodingError` for a value it cannot encode).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(key, forKey: .key)
        try container.encode(outcome.rawValue, forKey: .outcome)
        try container.encode(detail, forKey: .detail)
        try container.encodeOrNull(timestamp, forKey: .timestamp)
        try container.encodeOrNull(age, forKey: .age)
        try container.encodeOrNull(maxAge, forKey: .maxAge)
        try container.encodeOrNull(seq, forKey: .seq)
        if dryRun { try container.encode(true, forKey: .dryRun) }
    }
}

extension KeyedEncodingContainer {
    /// `value`, or `null` when there is none: the reports promise every key.
    mutating func encodeOrNull<Value: Encodable>(_ value: Value?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}
