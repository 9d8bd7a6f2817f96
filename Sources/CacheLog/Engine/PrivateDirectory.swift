#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The directories a new database is created in: each one that is missing, the database's own
/// and any above it, is made readable by its owner only (0700), as the XDG Base Directory spec
/// asks of a cache directory. A cache holds API responses, which may carry personal data or
/// tokens. A directory that exists keeps the mode its owner gave it.
enum PrivateDirectory {
    /// Creates `path` and the directories missing above it, each 0700 (less what the umask
    /// removes). Another process creating one of them at the same moment is no failure.
    ///
    /// - Throws: ``CacheLogError/notWritable(path:reason:)`` for `path`, with the reason of the
    ///   directory that could not be made, or ``CacheLogError/notADirectory(path:)`` for a file
    ///   in the way.
    static func create(_ path: String) throws {
        var missing: [String] = []
        var current = path
        while !current.isEmpty, !FileManager.default.fileExists(atPath: current) {
            missing.append(current)
            current = parent(of: current)
        }
        if !current.isEmpty, isDirectory(atPath: current) == false { throw CacheLogError.notADirectory(path: current) }
        for directory in missing.reversed() where mkdir(directory, 0o700) != 0 {
            let code = errno
            guard code == EEXIST else { throw CacheLogError.notWritable(path: path, reason: WriteAccess.denial(errno: code)) }
            // Made by another process a moment ago, a file in the way, or a link to nothing.
            switch isDirectory(atPath: directory) {
            case true: continue
            case false: throw CacheLogError.notADirectory(path: directory)
            case nil: throw CacheLogError.notWritable(path: path, reason: .failed("\(directory) is a link to nothing"))
            }
        }
    }

    /// `path` without its last component ("" when it has no other: the working directory).
    private static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
}
