/// Why a database cannot be written: the reason ``CacheLogError/notWritable(path:reason:)`` gives.
public enum WriteDenial: Sendable, Equatable, CustomStringConvertible {
    /// The file system that holds the database is mounted read-only.
    case readOnlyFileSystem
    /// This user may not write the directory or its files (their modes or owner).
    case permissionDenied
    /// The system refused for another reason, in its own words.
    case failed(String)

    /// The reason as the end of a sentence: "its file system is mounted read-only".
    public var description: String {
        switch self {
        case .readOnlyFileSystem: return "its file system is mounted read-only"
        case .permissionDenied: return "this user may not write it (permission denied)"
        case .failed(let words): return "the system refused it (\(words))"
        }
    }
}
