#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where retention stands, kept in `meta` as one value (`retention`, Format.md "Retention"): the
/// pass under way, what the last pass did, and what the next one is judged against.
struct RetentionState: Sendable, Equatable {
    /// The pass under way; nil between passes.
    var pass: RetentionPass?
    /// What the last pass did, or the one under way.
    var report: RetentionReport?
    /// The seq of the policy's record the last pass started under: a newer policy makes a pass due.
    var appliedPolicy: UInt64 = 0
    /// The bytes in use when the last pass ended: growth since makes the next one due.
    var bytesInUseAfterPass: UInt64 = 0
    /// The highest seq retention removed: up to it, a missing seq is history let go, not damage.
    var zone: UInt64 = 0

    static let key = MetaKey.retention
    private static let version: UInt8 = 1

    /// The state in `meta`: the `retention` value, or, in a database written before it, the
    /// keys that held its parts (read, never written).
    static func load(_ txn: Transaction, meta: Table) throws -> RetentionState {
        if let raw = try txn.get(meta, key) { return decode(raw) ?? RetentionState() }
        return try Legacy.load(txn, meta: meta)
    }

    /// Writes the state as one value, and drops the keys of the older layout.
    func save(_ txn: Transaction, meta: Table) throws {
        try txn.put(meta, Self.key, encoded())
        for legacy in Legacy.keys { try txn.delete(meta, legacy) }
    }

    /// u8 version 1, u64 zone, u64 applied policy, u64 bytes in use after the last pass, u8
    /// flags (bit 0: a pass, bit 1: a report), then the pass (f64 clock, u64 walked through, u64
    /// pressure bound) and the report (f64 start, u64 removed, u64 bytes freed, u64 evicted, u8
    /// finished, u8 1 when the limit was unmet, then u64 limit, u64 floor bytes, u64 live bytes, u64 keys).
    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 96)
        writer.u8(Self.version)
        writer.u64(zone)
        writer.u64(appliedPolicy)
        writer.u64(bytesInUseAfterPass)
        writer.u8((pass == nil ? 0 : 1) | (report == nil ? 0 : 2))
        if let pass {
            writer.f64(pass.now)
            writer.u64(pass.walkedThrough)
            writer.u64(pass.pressureThrough)
        }
        if let report {
            writer.f64(report.startedAt.stamp)
            writer.u64(UInt64(clamping: report.removed))
            writer.u64(UInt64(clamping: report.freedBytes))
            writer.u64(UInt64(clamping: report.evicted))
            writer.u8(report.finished ? 1 : 0)
            if let unmet = report.unmetLimit {
                writer.u8(1)
                writer.u64(UInt64(clamping: unmet.limit))
                writer.u64(UInt64(clamping: unmet.floorBytes))
                writer.u64(UInt64(clamping: unmet.liveBytes))
                writer.u64(UInt64(clamping: unmet.keys))
            } else {
                writer.u8(0)
            }
        }
        return writer.bytes
    }

    /// The state a value holds; nil when it does not decode (damage: retention then starts over,
    /// as with no state, and a pass with it).
    static func decode(_ raw: UnsafeRawBufferPointer) -> RetentionState? {
        var reader = ByteReader(raw)
        guard reader.u8() == version, let zone = reader.u64(), let applied = reader.u64(), let usedAfter = reader.u64(),
              let flags = reader.u8()
        else { return nil }
        var state = RetentionState(appliedPolicy: applied, bytesInUseAfterPass: usedAfter, zone: zone)
        if flags & 1 != 0 {
            guard let now = reader.f64(), now.isFinite, let walked = reader.u64(), let pressure = reader.u64() else { return nil }
            state.pass = RetentionPass(now: now, walkedThrough: walked, pressureThrough: pressure)
        }
        if flags & 2 != 0 {
            guard let started = reader.f64(), started.isFinite, let removed = reader.u64(), let freed = reader.u64(),
                  let evicted = reader.u64(), let finished = reader.u8(), let unmet = reader.u8()
            else { return nil }
            var report = RetentionReport(startedAt: Date(stamp: started), removed: Int(clamping: removed), freedBytes: Int(clamping: freed),
                                         evicted: Int(clamping: evicted), finished: finished != 0)
            if unmet != 0 {
                guard let limit = reader.u64(), let floor = reader.u64(), let live = reader.u64(), let keys = reader.u64() else { return nil }
                report.unmetLimit = UnmetSizeLimit(limit: Int(clamping: limit), floorBytes: Int(clamping: floor), liveBytes: Int(clamping: live),
                                                   keys: Int(clamping: keys))
            }
            state.report = report
        }
        guard reader.remaining == 0 else { return nil }
        return state
    }

    /// The layout of format 3 and before: one `meta` key per part, times in seconds since 1970.
    private enum Legacy {
        static let pass = Array("retentionPass".utf8)
        static let report = Array("retentionReport".utf8)
        static let applied = Array("retentionApplied".utf8)
        static let usedAfter = Array("retentionUsedAfter".utf8)
        static let zone = Array("retentionZone".utf8)
        static let keys = [pass, report, applied, usedAfter, zone]

        static func load(_ txn: Transaction, meta: Table) throws -> RetentionState {
            func u64(_ key: [UInt8]) throws -> UInt64 {
                guard let raw = try txn.get(meta, key), raw.count == 8 else { return 0 }
                return UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))
            }
            var state = RetentionState(appliedPolicy: try u64(applied), bytesInUseAfterPass: try u64(usedAfter), zone: try u64(zone))
            // f64 clock, u64 walked through, u64 pressure bound.
            if let raw = try txn.get(meta, pass), raw.count == 24 {
                var reader = ByteReader(raw)
                if let now = reader.f64(), now.isFinite, let walked = reader.u64(), let pressure = reader.u64() {
                    state.pass = RetentionPass(now: LegacyStamp.stamp(since1970: now), walkedThrough: walked, pressureThrough: pressure)
                }
            }
            // f64 start, u64 removed, u64 bytes freed, u64 evicted, u8 finished.
            if let raw = try txn.get(meta, report), raw.count == 33 {
                var reader = ByteReader(raw)
                if let started = reader.f64(), started.isFinite, let removed = reader.u64(), let freed = reader.u64(),
                   let evicted = reader.u64(), let finished = reader.u8() {
                    state.report = RetentionReport(
                        startedAt: Date(stamp: LegacyStamp.stamp(since1970: started)), removed: Int(clamping: removed),
                        freedBytes: Int(clamping: freed), evicted: Int(clamping: evicted), finished: finished != 0)
                }
            }
            return state
        }
    }
}
