#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells a read-only file system from file modes when a database cannot be written.
enum WriteAccess {
    /// The reason an `errno` from a write, an open for writing or `access(W_OK)` gives.
    ///
    /// - Parameter code: The `errno` value the call set.
    static func denial(errno code: Int32) -> WriteDenial {
        switch code {
        case EROFS: return .readOnlyFileSystem
        case EACCES: return .permissionDenied
        // EPERM is not about file modes (a file system that takes no new directories, as /sys).
        default: return .failed(String(cString: strerror(code)))
        }
    }

    /// Why this process cannot write `path`, or `nil` when it can (`access(2)` with `W_OK`).
    ///
    /// - Parameter path: A directory or file.
    static func denial(of path: String) -> WriteDenial? {
        access(path, W_OK) == 0 ? nil : denial(errno: errno)
    }
}
