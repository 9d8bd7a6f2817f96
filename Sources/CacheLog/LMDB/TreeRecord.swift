/// A tree's record (`MDB_db`): in a meta page for the free list and the catalog, in the catalog
/// for each table, in a leaf node for a key's duplicates.
struct TreeRecord: Equatable {
    /// For packed duplicates (`MDB_DUPFIXED`), the size of each.
    var pad: Int
    var flags: UInt16
    var depth: Int
    var branchPages: Int, leafPages: Int, overflowPages: Int, entries: Int
    var root: Int

    /// `P_INVALID`: the root of an empty tree.
    static let none = -1
    static let size = 8 + 5 * MemoryLayout<Int>.size

    init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        func word(_ index: Int) -> Int {
            Int(truncatingIfNeeded: bytes.loadUnaligned(fromByteOffset: offset + 8 + 8 * index, as: UInt64.self))
        }
        pad = Int(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        flags = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self)
        depth = Int(bytes.loadUnaligned(fromByteOffset: offset + 6, as: UInt16.self))
        (branchPages, leafPages, overflowPages, entries, root) = (word(0), word(1), word(2), word(3), word(4))
    }

    init(_ bytes: [UInt8], at offset: Int) {
        self = bytes.withUnsafeBytes { TreeRecord($0, at: offset) }
    }
}
