/// An error code from the storage engine: one of liblmdb's own codes, or the system error
/// (`errno`) beneath it, as swift-system's `Errno` names a system error. The named codes are the
/// ones CacheLog reacts to; any other code keeps its number and its message.
public struct StorageErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The number liblmdb returned (LMDB's own codes are negative, system errors positive).
    public let rawValue: Int32
    /// What liblmdb says the code means (its messages also cover system errors).
    public let description: String

    /// The code for liblmdb's number `rawValue`, with liblmdb's message for it.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
        description = LMDBMessages.message(for: rawValue)
    }
}
