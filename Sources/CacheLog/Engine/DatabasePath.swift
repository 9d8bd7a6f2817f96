#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Refuses a database path that another user could have arranged, before anything there is
/// opened or created (as `cachelog --out` refuses an output file): a link another user planted
/// in a shared directory on the way (``PathWalk``), a `data.mdb` or `lock.mdb` that is another
/// user's link or a link to nothing (LMDB would create the file where it points), and, for an
/// open that writes, a directory or files that another user owns or may write (who could read
/// what this process saves, or change what it reads), unless the caller shares them on purpose.
enum DatabasePath {
    /// Checks `path`; `writing`: the open may write, `shared`: other users' files are the
    /// caller's choice (``EventLog/Options/sharedWithOtherUsers``).
    ///
    /// - Throws: ``CacheLogError/untrustedPath(path:detail:)``. A path that does not lead
    ///   anywhere yet is left to the open, which creates it or says what is missing.
    static func check(_ path: String, writing: Bool, shared: Bool) throws {
        // A trailing "/." walks through the last component too, as the directory it must be.
        let resolved: PathWalk.Resolved
        switch PathWalk.resolve(path + "/.") {
        case .failure(.planted(let link)):
            throw CacheLogError.untrustedPath(path: path, detail: "\(link) is a link another user made in a shared directory")
        case .failure:
            return
        case .success(let found):
            resolved = found
        }
        defer { close(resolved.directory) }
        let me = geteuid()
        for name in ["data.mdb", "lock.mdb"] {
            var link = stat()
            guard fstatat(resolved.directory, name, &link, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            guard link.st_mode & S_IFMT == S_IFLNK else { continue }
            if link.st_uid != me && link.st_uid != 0 {
                throw CacheLogError.untrustedPath(path: path, detail: "its \(name) is a link another user (uid \(link.st_uid)) made")
            }
            var target = stat()
            if fstatat(resolved.directory, name, &target, 0) != 0 && errno == ENOENT {
                throw CacheLogError.untrustedPath(path: path, detail: "its \(name) is a link to nothing, and a file would be created where it points")
            }
        }
        guard writing, !shared else { return }
        for name in [".", "data.mdb", "lock.mdb"] {
            var info = stat()
            guard fstatat(resolved.directory, name, &info, 0) == 0 else { continue }
            let what = name == "." ? "its directory" : "its \(name)"
            if info.st_uid != me {
                throw CacheLogError.untrustedPath(
                    path: path, detail: "\(what) belongs to another user (uid \(info.st_uid)), who could read and change what is saved (open it shared on purpose, or read-only)")
            }
            if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
                let mode = String(info.st_mode & 0o777, radix: 8)
                throw CacheLogError.untrustedPath(
                    path: path, detail: "\(what) may be written by other users (mode \(mode)) (open it shared on purpose, or make it the owner's alone)")
            }
        }
    }
}
