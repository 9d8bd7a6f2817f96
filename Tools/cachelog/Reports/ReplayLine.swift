import CacheLog
import FeedCacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One line of `replay --format jsonl`: an event, or a record that failed its checks.
///
/// The definition of the line. `replay --follow` writes it through ``JSONOutput``; a plain
/// replay writes the same bytes by hand (``EventPrinter/writeJSON(_:to:)``), and a test holds
/// the two to each other.
struct ReplayLine: Encodable {
    let item: LogItem

    private enum CodingKeys: String, CodingKey {
        case seq, at, type, key, timestamp, bytes, maxAge, contract, origin, reason, history, sizeLimit, overrides, by, storedBytes, payload, error
    }

    /// An override of a retention policy, as a line shows it.
    private struct Override: Encodable {
        var prefix: String?
        var contract: String?
        var history: Double

        init(_ override: RetentionPolicy.Override) {
            switch override.match {
            case .keyPrefix(let prefix): self.prefix = prefix
            case .contract(let contract): self.contract = contract
            }
            history = override.history
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch item {
        case .corrupt(let seq, let detail):
            try container.encode(seq, forKey: .seq)
            try container.encode("corrupt", forKey: .type)
            try container.encode(detail, forKey: .error)
        case .event(let event):
            try encode(event, into: &container)
        }
    }

    private func encode(_ event: RecordedEvent, into container: inout KeyedEncodingContainer<CodingKeys>) throws {
        try container.encode(event.seq, forKey: .seq)
        try container.encode(event.recordedAt, forKey: .at)
        try container.encode(event.kind.name, forKey: .type)
        try container.encode(event.key, forKey: .key)
        try container.encodeIfPresent(event.timestamp, forKey: .timestamp)
        switch event.kind {
        case .put:
            try container.encode(event.payloadBytes, forKey: .bytes)
            try container.encode(NullWhenNil(wrappedValue: event.maxAge), forKey: .maxAge)
            try container.encode(NullWhenNil(wrappedValue: event.metadata[CacheLogFeedStore.contractName]), forKey: .contract)
            try container.encode(PutOrigin(metadata: event.metadata).rawValue, forKey: .origin)
        case .delete:
            try container.encode(event.reason?.name ?? "unknown", forKey: .reason)
        case .expire:
            try container.encode(event.maxAge ?? 0, forKey: .maxAge)
        case .retention:
            let retention = event.retention
            try container.encode(NullWhenNil(wrappedValue: retention?.policy.history), forKey: .history)
            try container.encode(NullWhenNil(wrappedValue: retention?.policy.sizeLimit), forKey: .sizeLimit)
            try container.encode((retention?.policy.overrides ?? []).map(Override.init), forKey: .overrides)
            try container.encode(retention?.by ?? "", forKey: .by)
        }
        try container.encode(event.storedBytes, forKey: .storedBytes)
        try container.encodeIfPresent(event.payload.map(RawJSON.init(payload:)), forKey: .payload)
    }
}
