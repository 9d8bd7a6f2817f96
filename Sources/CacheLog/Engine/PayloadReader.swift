#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads the payload of a put: through its reference to the put that holds the bytes, and that
/// put's delta chain, each record checked on the way (the chain's bytes are in `Format.md`).
struct PayloadReader {
    /// The table handles.
    let schema: Tables

    /// The payload of the put `record` at `seq`, following its reference to the earlier put that
    /// holds the bytes when it has one, and that put's delta chain when it is a delta. A broken
    /// reference or base is corruption of the record that names it; bad bytes in the target are
    /// reported at the target's seq.
    ///
    /// `known`, a version of the key remembered from a save (``RecentPayloads``), gives the bytes
    /// when the record that holds them is the one it was remembered from:
    /// every record on the way is still read and checked as without it (the put, the record it
    /// references, each base of its chain), and only the inflating is spared, so damage is
    /// reported as it always was.
    func payload(_ txn: Transaction, _ header: EventCodec.Header, in record: UnsafeRawBufferPointer, seq: UInt64,
                 known: RememberedPayload? = nil) throws -> Data {
        let (sourceHeader, source, sourceSeq) = try payloadRecord(txn, header, in: record, seq: seq)
        return try rebuilt(txn, sourceHeader, in: source, seq: sourceSeq, known: known).payload
    }

    /// The payload of a put that is not a reference, and the header of the whole put that starts
    /// its chain: its body inflated, or, for a delta, rebuilt through its chain: each base read
    /// (its checksum checked) down to the whole put that starts the chain, then each delta's
    /// instructions applied on the way back up. Each base is one shallower than the delta on it
    /// (``deltaBase(_:_:of:in:seq:)``), so a chain is at most the delta's depth plus one records,
    /// whatever its bytes say: the engine writes at most ``EventCodec/maxDeltaDepth`` + 1, and
    /// damage cannot make it more than 256. With `known` (see ``payload(_:_:in:seq:known:)``), the
    /// chain is walked and checked, and the remembered bytes stand for what it would rebuild.
    private func rebuilt(_ txn: Transaction, _ header: EventCodec.Header, in record: UnsafeRawBufferPointer, seq: UInt64,
                         known: RememberedPayload? = nil) throws -> (payload: Data, whole: EventCodec.Header) {
        let isKnown = known?.isPayload(ofPutAt: seq, record: record, length: header.payloadLength) ?? false
        guard header.isDelta else {
            if isKnown, let known { return (known.payload, header) }
            return (try EventCodec.payload(header, in: record, seq: seq), header)
        }
        var deltas: [(EventCodec.Header, UnsafeRawBufferPointer, UInt64)] = []
        var current = (header, record, seq)
        while current.0.isDelta {
            deltas.append(current)
            let delta = try EventCodec.delta(current.0, in: current.1, seq: current.2)
            let (baseHeader, base) = try deltaBase(txn, delta, of: current.0, in: current.1, seq: current.2)
            current = (baseHeader, base, delta.base)
        }
        if isKnown, let known { return (known.payload, current.0) }
        var payload = try EventCodec.payload(current.0, in: current.1, seq: current.2)
        for (deltaHeader, deltaRecord, deltaSeq) in deltas.reversed() {
            payload = try EventCodec.applyDelta(deltaHeader, in: deltaRecord, seq: deltaSeq, to: payload)
        }
        return (payload, current.0)
    }

    /// The base of delta put `seq`, checked (its checksum too) to be a put of the same key that
    /// holds its payload (no reference) at a depth one short of the delta's. A missing or
    /// mismatched base is corruption of the delta; a damaged base is reported at its own seq.
    func deltaBase(_ txn: Transaction, _ delta: EventCodec.DeltaBody, of header: EventCodec.Header,
                   in record: UnsafeRawBufferPointer, seq: UInt64) throws -> (EventCodec.Header, UnsafeRawBufferPointer) {
        guard let base = try txn.get(schema.events, SeqKey.bytes(delta.base)) else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "its delta base at seq \(delta.base) is missing")
        }
        let baseHeader = try EventCodec.decodeHeader(base, seq: delta.base)
        guard baseHeader.kind == .put, !baseHeader.isReference,
              EventCodec.keyBytes(baseHeader, in: base).elementsEqual(EventCodec.keyBytes(header, in: record)),
              try EventCodec.depth(baseHeader, in: base, seq: delta.base) == delta.depth - 1
        else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "its delta base at seq \(delta.base) does not match that record")
        }
        return (baseHeader, base)
    }

    /// What the appending task needs of the version a put replaces, to store the put as a
    /// reference to it or a delta against it: the record that holds the live payload of `key`
    /// (checksum checked), its chain depth, the CRC-32 it ends with, the payload, and how well
    /// the whole put that starts its chain compressed. nil when there is none or it cannot be
    /// read: the put is then stored whole, as it would be anyway. `known`, a version of the key
    /// remembered from before (``RecentPayloads``), gives the payload when the record that holds
    /// the live payload is the one it was remembered from: then nothing is inflated.
    ///
    /// The chain under the live record is read and checked either way (each base's checksum): a
    /// damaged base leaves the put whole, never a delta on a chain that cannot be rebuilt.
    ///
    /// - Parameters:
    ///   - txn: The transaction to read in.
    ///   - key: The key.
    ///   - seq: The seq of the key's live payload, from its state row.
    ///   - known: A version of the key remembered from before.
    func baseVersion(_ txn: Transaction, key: [UInt8], payloadAt seq: UInt64, known: RememberedPayload? = nil) -> BaseVersion? {
        guard let record = try? txn.get(schema.events, SeqKey.bytes(seq)),
              let header = try? EventCodec.decodeHeader(record, seq: seq),
              header.kind == .put, !header.isReference, EventCodec.keyBytes(header, in: record).elementsEqual(key),
              let checksum = EventCodec.storedChecksum(record),
              let depth = try? EventCodec.depth(header, in: record, seq: seq),
              let (payload, whole) = try? rebuilt(txn, header, in: record, seq: seq, known: known)
        else { return nil }
        return BaseVersion(seq: seq, checksum: checksum, depth: depth, payload: payload, compression: whole.compression)
    }

    /// A put's payload as ``baseVersion(_:key:payloadAt:known:)`` found it, copied out of the transaction.
    struct BaseVersion {
        var seq: UInt64
        var checksum: UInt32
        var depth: Int
        var payload: Data
        /// Compressed bytes per payload byte of the whole put that starts the chain: what a
        /// whole copy of a similar payload of this key would cost, without compressing it.
        var compression: Double
    }

    /// The record that holds the payload bytes of the put `record`: itself, or the earlier put it
    /// references (which may be a delta), checked to be a put of the same key and length.
    func payloadRecord(_ txn: Transaction, _ header: EventCodec.Header, in record: UnsafeRawBufferPointer, seq: UInt64)
        throws -> (EventCodec.Header, UnsafeRawBufferPointer, UInt64) {
        let source = try EventCodec.payloadSeq(header, in: record, seq: seq)
        guard source != seq else { return (header, record, seq) }
        guard let target = try txn.get(schema.events, SeqKey.bytes(source)) else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "its payload is at seq \(source), which is missing")
        }
        let targetHeader = try EventCodec.decodeHeader(target, seq: source)
        guard targetHeader.kind == .put, !targetHeader.isReference, targetHeader.payloadLength == header.payloadLength,
              EventCodec.keyBytes(targetHeader, in: target).elementsEqual(EventCodec.keyBytes(header, in: record))
        else {
            throw CacheLogError.corruptRecord(seq: seq, detail: "its payload reference to seq \(source) does not match that record")
        }
        return (targetHeader, target, source)
    }
}
