#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether `path` names a directory (symbolic links followed): `nil` when nothing is there, as
/// `FileManager.fileExists(atPath:isDirectory:)` tells it, whose flag is a `Bool` on Linux and an
/// `ObjCBool` on Apple platforms.
package func isDirectory(atPath path: String) -> Bool? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return info.st_mode & S_IFMT == S_IFDIR
}
