#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking

/// Decoded items kept in memory, each under its key and the payload it was decoded from (the
/// seq of the record holding those bytes, `StoredValue.payloadSeq`), bounded by a cost limit.
///
/// A load still reads the key's live put from the log, in the one read that would have fetched
/// the payload, but leaves the payload out when it is the one held here: the log stays the only
/// truth, so a save by another process, an expiry, a removal, compaction or retention is seen by
/// the next load, which then decodes afresh. What is saved meanwhile is never served from here.
/// Decoding (JSON into items) was three quarters of a load from the cache; inflating the
/// payload most of the rest.
final class MemoryTier: Sendable {
    private struct Slot {
        var payloadSeq: UInt64
        var items: any Sendable
        var type: ObjectIdentifier
        var cost: Int
        var lastUse: UInt64
    }

    private struct State {
        var slots: [String: Slot] = [:]
        var cost = 0
        var uses: UInt64 = 0
    }

    /// The most the held items may cost, in payload bytes; 0 holds nothing.
    let costLimit: Int
    private let state = Locked(State())

    init(costLimit: Int) {
        self.costLimit = max(0, costLimit)
    }

    /// The items held for `key` as `Item`s and the payload they came from, if any.
    func held<Item: Sendable>(_ key: String, as _: Item.Type) -> (payloadSeq: UInt64, items: [Item])? {
        state.withLock { state in
            guard var slot = state.slots[key], let items = slot.items as? [Item] else { return nil }
            state.uses += 1
            slot.lastUse = state.uses
            state.slots[key] = slot
            return (slot.payloadSeq, items)
        }
    }

    /// Holds `items`, decoded from `payloadSeq` (of `cost` bytes), for `key`: the least recently
    /// used go while the held cost is over the limit. Items that alone cost more are not held.
    func hold<Item: Sendable>(_ items: [Item], of key: String, payloadSeq: UInt64, cost: Int) {
        guard cost <= costLimit else { return }
        state.withLock { state in
            if let old = state.slots.removeValue(forKey: key) { state.cost -= old.cost }
            state.uses += 1
            state.slots[key] = Slot(payloadSeq: payloadSeq, items: items, type: ObjectIdentifier(Item.self), cost: cost, lastUse: state.uses)
            state.cost += cost
            while state.cost > costLimit, let oldest = state.slots.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                state.slots[oldest.key] = nil
                state.cost -= oldest.value.cost
            }
        }
    }

    /// The cost of what is held now.
    var heldCost: Int { state.withLock { $0.cost } }
}

/// The tier's side of one load's reads, for a store that is not generic over the items.
protocol HeldPayload: Sendable {
    /// Before a read: the payload whose items are held, which the read may leave out. The
    /// items are kept for this load from now on, whatever the tier lets go meanwhile.
    func heldPayload() -> UInt64?
    /// After the read: the payload the log holds for the key, and whether the read left it out.
    func read(payloadSeq: UInt64, omitted: Bool)
    /// The payload the last read left out, if it did.
    func omittedPayload() -> UInt64?
}

/// One load's use of the tier for one key: which items it kept before its read, what the read
/// found, and so what decoding a payload gives.
final class TierRead<Item: Sendable>: HeldPayload {
    private struct State {
        var kept: (payloadSeq: UInt64, items: [Item])?
        var read: (payloadSeq: UInt64, omitted: Bool)?
    }

    private let tier: MemoryTier
    private let key: String
    private let state = Locked(State())

    init(tier: MemoryTier, key: String) {
        self.tier = tier
        self.key = key
    }

    func heldPayload() -> UInt64? {
        let held = tier.held(key, as: Item.self)
        state.withLock { $0 = State(kept: held, read: nil) }
        return held?.payloadSeq
    }

    func read(payloadSeq: UInt64, omitted: Bool) {
        state.withLock { $0.read = (payloadSeq, omitted) }
    }

    func omittedPayload() -> UInt64? {
        state.withLock { state in state.read.flatMap { $0.omitted ? $0.payloadSeq : nil } }
    }

    /// The items of `payload`, the payload of this load's last read: those kept when the read
    /// left it out, else decoded by `decode` and then held under the payload they came from.
    func items(of payload: Data, _ decoding: (Data) throws -> [Item]) throws -> [Item] {
        let (kept, read) = state.withLock { ($0.kept, $0.read) }
        if let read, read.omitted, let kept, kept.payloadSeq == read.payloadSeq { return kept.items }
        let items = try decoding(payload)
        if let read, !read.omitted { tier.hold(items, of: key, payloadSeq: read.payloadSeq, cost: payload.count) }
        return items
    }

    /// `coder`, decoding through this read (``items(of:_:)``).
    func coder(over coder: FeedPayloadCoder<Item>) -> FeedPayloadCoder<Item> {
        FeedPayloadCoder(encode: coder.encode, decode: { payload in try self.items(of: payload, coder.decode) })
    }
}
