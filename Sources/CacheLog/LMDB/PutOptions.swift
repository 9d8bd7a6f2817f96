internal import CLMDB

/// How a put may store its row, as swift-system's `OpenOptions` names `open`'s flags.
struct PutOptions: OptionSet, Sendable {
    let rawValue: UInt32

    /// The key sorts after every key in the table (LMDB checks it, and fails the put with
    /// ``StorageErrorCode/keyExists`` when it does not): pages are filled to the end instead of split.
    static let append = PutOptions(rawValue: UInt32(MDB_APPEND))

    /// In a table of sorted duplicates, the value sorts after every value the key has.
    static let appendDuplicate = PutOptions(rawValue: UInt32(MDB_APPENDDUP))
}
