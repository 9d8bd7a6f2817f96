#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When a put is stored as less than a whole copy: a note that its payload equals the key's live
/// version, a delta against that version, or neither (the bytes of each are in `Format.md`).
enum DeltaDecision {
    /// The payload sizes a put may be stored as a delta at. Smaller payloads compress to a few
    /// hundred bytes, about what a delta's record costs anyway; up to the largest, a whole body
    /// made by the writer (when the base is gone) always fits its record's u32 lengths.
    static let sizes = 1024...Deflate.maximumInput

    /// The payload equals the live version's: the put refers to that record.
    case identical(EventCodec.IdenticalPayload)
    /// The put is stored as this delta against the live version.
    case delta(EventCodec.PreparedDelta)
    /// The put is stored whole.
    case whole

    /// Decides how `payload` is stored against `base`.
    ///
    /// A delta is kept when it is under half of what a whole copy would take (judged by how the
    /// whole put that starts the base's chain compressed) and the chain is not at
    /// ``EventCodec/maxDeltaDepth`` already. It is not tried past a third of the payload
    /// inserted: inserted bytes compress worse than the whole, so it would seldom come under half.
    ///
    /// - Parameters:
    ///   - payload: The put's payload.
    ///   - base: The key's live version.
    ///   - level: The zlib level of the delta's inserted bytes.
    static func deciding(_ payload: Data, against base: PayloadReader.BaseVersion, level: Int32) -> DeltaDecision {
        if base.payload == payload { return .identical(EventCodec.IdenticalPayload(seq: base.seq, checksum: base.checksum)) }
        let whole = Double(payload.count) * base.compression
        guard base.depth < EventCodec.maxDeltaDepth,
              let body = try? EventCodec.deltaBody(from: base.payload, to: payload, baseSeq: base.seq, depth: base.depth + 1,
                                                   level: level, maxInserted: payload.count / 3),
              Double(body.count) * 2 < whole
        else { return .whole }
        return .delta(EventCodec.PreparedDelta(
            base: base.seq, baseChecksum: base.checksum, baseLength: base.payload.count, depth: base.depth + 1, body: body))
    }
}
