import Foundation

/// A deterministic generator (SplitMix64), so every random test, and every payload the test
/// writer process sends, replays the same way from its seed.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) } }

    /// `count` bytes, eight per draw: what the writer process sends as save `index` of a run
    /// seeded with `seed`, so a test can check every byte it finds.
    public static func payload(seed: UInt64, index: Int, count: Int) -> Data {
        var generator = SeededGenerator(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(index))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {
            withUnsafeBytes(of: generator.next().littleEndian) { bytes.append(contentsOf: $0.prefix(count - bytes.count)) }
        }
        return Data(bytes)
    }
}
