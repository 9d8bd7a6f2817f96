#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A path walked one component at a time through directory descriptors, as the kernel walks it,
/// so that what is checked is what is then opened: no other user can swap a link in between.
///
/// A link is followed unless it is *planted*: it sits in a sticky, world-writable directory
/// (`/tmp`) and belongs neither to this user nor to the directory's owner, the rule of Linux's
/// `fs.protected_symlinks`, applied here whether or not the kernel applies it. The walk ends at
/// the last component, which it does not follow: the caller opens it relative to
/// ``Resolved/directory`` with `O_NOFOLLOW`, and walks again when it finds a link there (another
/// user made one meanwhile).
package struct PathWalk {
    /// Where a path leads: the directory of its last component, that component's name, and what
    /// is there now (nil: nothing yet).
    package struct Resolved {
        /// A descriptor of the directory (`O_PATH` on Linux); the caller closes it.
        package let directory: Int32
        package let name: String
        package let info: stat?
    }

    /// Why a path cannot be walked.
    package enum Refusal: Error {
        /// `link` (as the path spells it) is another user's link in a shared directory.
        case planted(link: String)
        /// An error number: ENOENT for a missing directory, ELOOP for too many links, ENOTDIR, …
        case failed(Int32)
    }

    #if os(Linux)
    /// Linux's O_PATH (fcntl.h: 010000000 on every architecture but alpha, parisc and sparc),
    /// which Glibc's module leaves out with _GNU_SOURCE: a directory a walk may not list but pass.
    private static let pathOnly: Int32 = 0o10000000
    private static let directoryFlags = pathOnly | O_DIRECTORY | O_CLOEXEC
    #else
    private static let directoryFlags = O_RDONLY | O_DIRECTORY | O_CLOEXEC
    #endif

    /// Walks `path` to its last component, following every link but a planted one (at most 40,
    /// as the kernel does).
    package static func resolve(_ path: String) -> Result<Resolved, Refusal> {
        guard !path.isEmpty else { return .failure(.failed(ENOENT)) }
        var pending = Self.components(path)
        var directory = open(path.hasPrefix("/") ? "/" : ".", directoryFlags)
        guard directory >= 0 else { return .failure(.failed(errno)) }
        // The path as it is spelt up to here, to name a planted link as the user wrote it.
        var walked = path.hasPrefix("/") ? "" : "."
        var links = 0
        func fail(_ refusal: Refusal) -> Result<Resolved, Refusal> {
            close(directory)
            return .failure(refusal)
        }
        while let component = pending.first {
            pending.removeFirst()
            if component == "." && !pending.isEmpty { continue }
            let spelt = walked + "/" + component
            var info = stat()
            guard fstatat(directory, component, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                let code = errno
                // Nothing there yet: the last component may be created; a directory may not.
                if code == ENOENT && pending.isEmpty { return .success(Resolved(directory: directory, name: component, info: nil)) }
                return fail(.failed(code))
            }
            if info.st_mode & S_IFMT == S_IFLNK {
                var parent = stat()
                guard fstat(directory, &parent) == 0 else { return fail(.failed(errno)) }
                let shared = parent.st_mode & S_ISVTX != 0 && parent.st_mode & S_IWOTH != 0
                if shared && info.st_uid != geteuid() && info.st_uid != parent.st_uid { return fail(.planted(link: spelt)) }
                links += 1
                guard links <= 40 else { return fail(.failed(ELOOP)) }
                guard let target = linkTarget(directory, component) else { return fail(.failed(errno)) }
                pending = Self.components(target) + pending
                if target.hasPrefix("/") {
                    close(directory)
                    directory = open("/", directoryFlags)
                    guard directory >= 0 else { return .failure(.failed(errno)) }
                    walked = ""
                }
                // A link to "/" or to "." leaves nothing to open: the directory itself is named.
                if pending.isEmpty { pending = ["."] }
                continue
            }
            if pending.isEmpty { return .success(Resolved(directory: directory, name: component, info: info)) }
            let next = openat(directory, component, directoryFlags | O_NOFOLLOW)
            guard next >= 0 else {
                // Another user put a link there since the check: check again.
                if errno == ELOOP || errno == ENOTDIR, links < 40 {
                    pending.insert(component, at: 0)
                    links += 1
                    continue
                }
                return fail(.failed(errno))
            }
            close(directory)
            directory = next
            walked = spelt
        }
        // The path ended with "/": it names a directory.
        return fail(.failed(EISDIR))
    }

    private static func components(_ path: String) -> [String] {
        var parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if path.hasSuffix("/") && !parts.isEmpty { parts.append(".") }
        return parts
    }

    /// Where the link `name` in `directory` points; `nil` with `errno` set when it cannot be read
    /// or is not UTF-8 (which a path in a Swift String could not name exactly).
    private static func linkTarget(_ directory: Int32, _ name: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX))
        let count = readlinkat(directory, name, &buffer, buffer.count)
        guard count >= 0 else { return nil }
        guard let target = String(validating: buffer[0..<count], as: UTF8.self) else {
            errno = EILSEQ
            return nil
        }
        return target
    }
}
