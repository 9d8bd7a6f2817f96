import Foundation
import Locking

/// Environments open in this process, by real path: LMDB forbids opening one twice in a process
/// (its locks are per process, so a second open would corrupt the lock table on close).
enum OpenPaths {
    static let shared = Locked(Set<String>())

    /// The form a path is claimed under: symlinks resolved, so two spellings of one directory match.
    static func canonical(_ path: String) -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
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
