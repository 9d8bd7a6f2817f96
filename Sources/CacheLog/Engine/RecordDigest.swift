/// An order-independent digest of (key, seq) pairs: the fold of the log adds every record it
/// applies, a walk of the key index adds every entry, and equal digests say the index lists
/// exactly the folded records without a lookup per record (which would make a rebuild several
/// times slower). Only a mismatch, that is damage, pays for the record-by-record comparison.
struct RecordDigest: Equatable {
    private(set) var count = 0
    private var sum: UInt64 = 0

    /// `keyHash` is ``StateFold/keyHash(_:)`` of the key's bytes.
    mutating func add(keyHash: UInt64, seq: UInt64) {
        count += 1
        // SplitMix64's finalizer: a sum of well-mixed values is hard to hit by accident.
        var z = keyHash &+ seq &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        sum &+= z ^ (z >> 31)
    }
}
