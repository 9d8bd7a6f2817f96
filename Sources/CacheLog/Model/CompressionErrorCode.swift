/// Why a compression failed, numbered as zlib numbers it, as ``CacheLogError/compressionFailed(code:)``
/// reports it.
public struct CompressionErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The number zlib returned (`Z_MEM_ERROR` is -4, `Z_BUF_ERROR` -5).
    public let rawValue: Int32

    /// The code for zlib's number `rawValue`.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The number, as zlib's messages are too terse to add anything to it.
    public var description: String { String(rawValue) }
}
