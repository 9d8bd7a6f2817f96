#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// Environments open in this process, by real path: LMDB forbids opening one twice in a process
/// (its locks are per process, so a second open would corrupt the lock table on close).
enum OpenPaths {
    static let shared = Locked(Set<String>())

    /// The form a path is claimed under: symlinks resolved, so two spellings of one directory match.
    ///
    /// realpath(3) for a directory that exists (every open makes or finds it first): Foundation's
    /// URL resolution costs each start of `cachelog` 2 % of its instructions (`callgrind`).
    static func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else {
            return URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether an instance for `path` is open in this process.
    static func isOpen(_ path: String) -> Bool {
        let canonical = canonical(path)
        return shared.withLock { $0.contains(canonical) }
    }

    static func claim(_ path: String) throws {
        let claimed = shared.withLock { $0.insert(path).inserted }
        guard claimed else { throw CacheLogError.alreadyOpen(path: path) }
    }

    static func release(_ path: String) {
        _ = shared.withLock { $0.remove(path) }
    }
}
