/// One page (or a sub-page inside a leaf node) of `size` bytes from `start` in `bytes`: its
/// node offsets (`mp_ptrs`), checked to lie inside it.
struct PageView {
    let bytes: UnsafeRawBufferPointer
    let start: Int
    let size: Int
    var end: Int { start + size }

    /// A node's header (`MDB_node`) and where its data starts.
    struct Node {
        var low: UInt16, high: UInt16, flags: UInt16, keySize: Int, data: Int
    }

    private static let header = MemoryLayout<Int>.size + 8

    func field<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
    }

    /// Reads the header of each of the first `count` nodes (clamped into the page), one load
    /// after another with nothing between them: the walk is bound by the latency of these
    /// cache misses, which the processor overlaps here but not in the checking loop.
    func touchNodes(_ count: Int) -> Int {
        var sum = 0
        for index in 0..<count {
            let offset = min(Int(field(UInt16.self, at: start + Self.header + 2 * index)), size - 8)
            sum &+= Int(field(UInt16.self, at: start + offset))
        }
        return sum
    }

    /// A node's key, as text (a table's name in the catalog).
    func key(_ node: Node) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(node.data - node.keySize)..<node.data]), as: UTF8.self)
    }

    /// How many nodes (or, packed, keys of `packedKeySize` bytes) the page holds.
    func count(packedKeySize: Int?, damaged: (String) -> CacheLogError) throws -> Int {
        let lower = Int(field(UInt16.self, at: start + Self.header - 4))
        let upper = Int(field(UInt16.self, at: start + Self.header - 2))
        guard Self.header <= lower, lower <= upper, upper <= size, (lower - Self.header) % 2 == 0 else {
            throw damaged("has free space from \(lower) to \(upper) in \(size) bytes")
        }
        let count = (lower - Self.header) / 2
        if let packedKeySize, Self.header + count * packedKeySize > size {
            throw damaged("holds \(count) keys of \(packedKeySize) bytes in \(size)")
        }
        return count
    }

    /// Node `index`, whose header and key lie inside the page, after its free space.
    func node(_ index: Int, damaged: (String) -> CacheLogError) throws -> Node {
        let upper = Int(field(UInt16.self, at: start + Self.header - 2))
        let offset = Int(field(UInt16.self, at: start + Self.header + 2 * index))
        guard offset >= upper, offset % 2 == 0, offset + 8 <= size else { throw damaged("has node \(index) at \(offset)") }
        let at = start + offset
        let keySize = Int(field(UInt16.self, at: at + 6))
        guard at + 8 + keySize <= end else { throw damaged("has node \(index) with a key past its end") }
        return Node(low: field(UInt16.self, at: at), high: field(UInt16.self, at: at + 2), flags: field(UInt16.self, at: at + 4), keySize: keySize, data: at + 8 + keySize)
    }
}
