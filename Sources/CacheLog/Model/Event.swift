#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An operation to append to the log. The engine stores events about opaque keys and payloads;
/// it knows nothing about what a payload means.
public enum Event: Sendable, Equatable {
    /// Insert `payload` as the live value of `key`, cached at `timestamp`.
    ///
    /// `maxAge` (seconds) records the policy the value was saved under, so that a reader that
    /// knows nothing of the writer can judge the key alone; `nil` records none. `metadata` is a
    /// few short named strings kept with the put (which contract the payload follows, an HTTP
    /// validator): names of 1 to 255 UTF-8 bytes, values up to 65,535, at most 65,535 in all.
    /// The name ``sinceName`` is the log's own: a conditional append writes it.
    case put(key: String, payload: Data, timestamp: Date, maxAge: TimeInterval? = nil, metadata: [String: String] = [:])
    /// Remove the live value of `key`, for `reason`.
    case delete(key: String, reason: DeletionReason)
    /// Validation found the value of `key`, cached at `timestamp`, too old under `maxAge` and removed it.
    /// It removes only that version: when the live value has another timestamp (a save landed
    /// after the validation read the cache), the expire is recorded and the value stays live.
    case expire(key: String, timestamp: Date, maxAge: TimeInterval)

    /// The key the event is about.
    public var key: String {
        switch self {
        case .put(let key, _, _, _, _), .delete(let key, _), .expire(let key, _, _): return key
        }
    }

    /// The kind of event, as stored.
    public var kind: EventKind {
        switch self {
        case .put: return .put
        case .delete: return .delete
        case .expire: return .expire
        }
    }
}

extension Event {
    /// The metadata name under which a put records the log's last seq when the fetch of its
    /// payload began, in decimal (``LogState/Entry/since``): written by
    /// ``EventLog/append(_:unlessSupersededSince:liveAt:leavingNewer:)`` into the puts it judges.
    public static let sinceName = "since"

    /// This event, when it is a put, recording that its fetch began at `since`.
    func recording(since: UInt64) -> Event {
        guard case .put(let key, let payload, let timestamp, let maxAge, var metadata) = self else { return self }
        metadata[Self.sinceName] = String(since)
        return .put(key: key, payload: payload, timestamp: timestamp, maxAge: maxAge, metadata: metadata)
    }
}

extension Event {
    /// Why a value was deleted. The raw value is the byte written in the record header.
    public enum DeletionReason: UInt8, Sendable, CaseIterable {
        /// A new value is about to be written (the first half of a save).
        case replaced = 1
        /// Somebody asked for the deletion.
        case explicit = 2
        /// The stored value could not be read back (corrupt or undecodable), so it was dropped.
        case retrievalError = 3

        /// The name used in output.
        public var name: String {
            switch self {
            case .replaced: return "replaced"
            case .explicit: return "explicit"
            case .retrievalError: return "retrieval-error"
            }
        }
    }
}
