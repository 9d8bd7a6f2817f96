#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Gives `lock.mdb` its blocks before LMDB maps it, so that a full file system is an error.
///
/// LMDB sizes the lock file with `ftruncate` and then writes it through a shared map: on a file
/// system with no room left (a full tmpfs) the first store to that map is a SIGBUS, which would
/// end the app. Allocated here, the same lack of room is `ENOSPC` from `posix_fallocate`.
enum LockFileRoom {
    /// Bytes reserved for a new lock file: LMDB's reader table for its default 126 readers.
    /// Never more: a process that found a larger file would count more reader slots than the
    /// processes already mapping it, and read past their map.
    static let bytes = 8 << 10

    /// Creates `lock.mdb` in `path` when it is missing (0600, as LMDB would) and allocates the
    /// blocks of its size, or of ``bytes`` when it is new; it never grows a lock file.
    ///
    /// - Parameter path: The database directory.
    /// - Throws: ``CacheLogError/storageFull(operation:code:)`` when there is no room for it.
    ///   Other failures are left to LMDB's open, which reports them as it always has.
    static func reserve(in path: String) throws {
        let descriptor = open(path + "/lock.mdb", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return }
        let code = posix_fallocate(descriptor, 0, info.st_size > 0 ? info.st_size : off_t(bytes))
        if code != 0 && StorageErrorCode(rawValue: code).isNoRoom {
            throw CacheLogError.storageFull(operation: "reserving lock.mdb", code: StorageErrorCode(rawValue: code))
        }
    }
}
