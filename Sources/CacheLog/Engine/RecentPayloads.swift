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

    private let state = Locked(State())

    private struct State {
        var versions: [[UInt8]: (version: RememberedPayload, stamp: UInt64)] = [:]
        var bytes = 0
        var clock: UInt64 = 0
        /// The keys in the order they were remembered, oldest first from `head`, each with the
        /// stamp it had then: one whose key was remembered again or forgotten since no longer
        /// matches, and is passed over. The oldest version goes in steps proportional to what is
        /// passed over, not in a scan of every version: a search that saves 2,000 objects into a
        /// full memory of small ones would scan tens of thousands for each.
        var order: [(key: [UInt8], stamp: UInt64)] = []
        var head = 0

        mutating func remove(_ key: [UInt8]) {
            if let old = versions.removeValue(forKey: key) { bytes -= old.version.payload.count }
        }

        mutating func add(_ version: RememberedPayload, of key: [UInt8]) {
            clock += 1
            versions[key] = (version, clock)
            bytes += version.payload.count
            order.append((key, clock))
            while bytes > RecentPayloads.limit, head < order.count {
                let (oldest, stamp) = order[head]
                head += 1
                if versions[oldest]?.stamp == stamp { remove(oldest) }
            }
            // What was passed over is dropped once it outnumbers what is held.
            if order.count > 2 * versions.count + 64 {
                order = order[head...].filter { versions[$0.key]?.stamp == $0.stamp }
                head = 0
            }
        }
    }

    /// The version remembered for `key`, if any.
    func version(of key: [UInt8]) -> RememberedPayload? {
        state.withLock { $0.versions[key]?.version }
    }

    /// Remembers `version` as the payload of `key`, replacing what was remembered for it.
    func remember(_ version: RememberedPayload, of key: [UInt8]) {
        state.withLock { state in
            state.remove(key)
            guard version.payload.count <= Self.limit / 4 else { return }
            state.add(version, of: key)
        }
    }

    /// Forgets `key`'s version: its live put is no longer the one remembered.
    func forget(_ key: [UInt8]) {
        state.withLock { $0.remove(key) }
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
