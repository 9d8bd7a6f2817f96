#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking

/// The payload each key last had in this process (saved, or read back to make a delta), so that
/// neither the next save of the key nor a load of it inflates it again: the save's read of its
/// base took about 120 µs of the 45 KB film feed's save (a quarter of what the saving task spent
/// in the engine), and a load as much.
///
/// A version is used only when the record that holds the key's live payload, read in the same
/// transaction, is the one it was remembered from: at its seq, of its length, ending with its
/// CRC-32 (a save by another process, a removal, a compaction or damage all show there, and the
/// payload is then read as before). A save learns its record's seq and CRC-32 from the writer
/// that stored it, without reading back. A load still reads and checks every record on the way (the
/// put, its reference, each base of its chain): only the inflating is spared, and damage is
/// reported as it always was.
///
/// Bounded: versions larger than a quarter of ``limit`` are not kept, and past the limit the
/// oldest remembered go first.
final class RecentPayloads: Sendable {
    /// Bytes of payload kept at most: the live versions of a few dozen typical feeds.
    static let limit = 8 << 20

    private let state = Locked<(versions: [[UInt8]: (version: RememberedPayload, stamp: UInt64)], bytes: Int, clock: UInt64)>(([:], 0, 0))

    /// The version remembered for `key`, if any.
    func version(of key: [UInt8]) -> RememberedPayload? {
        state.withLock { $0.versions[key]?.version }
    }

    /// Remembers `version` as the payload of `key`, replacing what was remembered for it.
    func remember(_ version: RememberedPayload, of key: [UInt8]) {
        let size = version.payload.count
        state.withLock { state in
            if let old = state.versions.removeValue(forKey: key) { state.bytes -= old.version.payload.count }
            guard size <= Self.limit / 4 else { return }
            state.clock += 1
            state.versions[key] = (version, state.clock)
            state.bytes += size
            while state.bytes > Self.limit, let oldest = state.versions.min(by: { $0.value.stamp < $1.value.stamp }) {
                state.versions.removeValue(forKey: oldest.key)
                state.bytes -= oldest.value.version.payload.count
            }
        }
    }

    /// Forgets `key`'s version: its live put is no longer the one remembered.
    func forget(_ key: [UInt8]) {
        state.withLock { state in
            if let old = state.versions.removeValue(forKey: key) { state.bytes -= old.version.payload.count }
        }
    }
}

/// A payload of a key as this process saved or read it, with the record that holds it: its seq
/// and the CRC-32 it ends with (as the writer stored it, or as a read found it).
struct RememberedPayload: Sendable {
    var payload: Data
    var seq: UInt64
    var checksum: UInt32

    /// Whether these are the bytes of the put at `seq` (not a reference), whose record is `record`.
    func isPayload(ofPutAt seq: UInt64, record: UnsafeRawBufferPointer, length: Int) -> Bool {
        self.seq == seq && payload.count == length && checksum == EventCodec.storedChecksum(record)
    }
}
