import ArgumentParser
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

/// Where `--out` puts bytes, as `curl -o` does: the kernel opens the path, so its protections
/// (`fs.protected_symlinks`, `fs.protected_regular`) and file ownership apply as they do to a
/// shell's redirection, and an existing file keeps its owner and mode.
///
/// - A regular file of the user's own, named directly (not through a link, not hard-linked
///   elsewhere), is replaced whole: the bytes go to a temporary file beside it, which then takes
///   its name, so a reader (or an interrupted run) never sees half of it. Where the directory
///   cannot take the temporary file (one the user may not write), it is written in place.
/// - A path that does not exist yet is created whole the same way, readable by its owner only
///   (reports and images carry keys and URLs), and never over a file that appears meanwhile.
/// - Anything else (a link, another user's file, a FIFO, a device, `/dev/stdout`, a shell's
///   `>(…)`) is opened by the kernel and written through, in order; a regular file there is
///   truncated first, as `curl -o` and `>` do.
/// - A link that another user made in a shared (sticky, world-writable) directory is never
///   followed, whether or not the kernel's `fs.protected_symlinks` is set: that is how another
///   user gets a root-run tool to overwrite a file of root's.
///
/// A descriptor is written to only when ``check(_:notIn:)`` saw it while the command line was parsed,
/// before the tool opened anything of its own: it is then one the caller gave (`>(…)`, `3>file`).
/// Later the database's files and the remote's sockets are descriptors too, some of them not
/// close-on-exec: `--out /dev/fd/8` could otherwise write image bytes into `data.mdb`.
enum OutFile {
    /// The descriptors ``check(_:notIn:)`` found `--out` to name; set while parsing, before any task runs.
    nonisolated(unsafe) private static var givenDescriptors: [String: Int32] = [:]

    /// For `validate()`: refuses an empty path, a directory and a file of the database in
    /// `database` (a usage error: writing over `data.mdb` would lose every cache), and notes the
    /// descriptor the path names, if it names one.
    static func check(_ path: String, notIn database: String) throws {
        var info = stat()
        guard !path.isEmpty, stat(path, &info) != 0 || info.st_mode & S_IFMT != S_IFDIR else {
            throw ValidationError("--out must name a file, not '\(path)'")
        }
        if let file = resolvedPath(path), let directory = resolvedPath(database),
           ["data.mdb", "lock.mdb"].contains(where: { resolvedPath(directory + "/" + $0) == file }) {
            throw ValidationError("--out names a file of the database at \(database); write the output elsewhere")
        }
        // What the runtime opened before parsing is close-on-exec; what a caller gives is not.
        if case .descriptor(let descriptor)? = descriptorNamed(by: path), fcntl(descriptor, F_GETFD) & FD_CLOEXEC == 0 {
            givenDescriptors[path] = descriptor
        }
    }

    static func write(_ data: Data, to path: String) throws {
        func failure(_ code: Int32) -> CLIFailure { CLIFailure("cannot write \(path): \(String(cString: strerror(code)))") }
        switch descriptorNamed(by: path) {
        case .descriptor(let descriptor)? where givenDescriptors[path] == descriptor:
            if let code = data.withUnsafeBytes({ StandardOutput.writeAll($0, to: descriptor) }) { throw failure(code) }
            return
        case .descriptor?: throw failure(EBADF)
        case .refused(let code)?: throw failure(code)
        case nil: break
        }
        if let link = plantedLink(on: path) {
            let which = link == path || link == "./" + path ? "it is" : "it leads through \(link),"
            throw CLIFailure("cannot write \(path): \(which) another user's link in a shared directory, which is not followed")
        }
        var info = stat()
        if lstat(path, &info) != 0, errno == ENOENT {
            if let code = create(path, with: data) { throw failure(code) }
            return
        }
        let ownFile = info.st_mode & S_IFMT == S_IFREG && info.st_uid == geteuid() && info.st_nlink == 1
        if ownFile, let replaced = replace(path, keeping: info, with: data) {
            if let code = replaced { throw failure(code) }
            return
        }
        if let code = writeThrough(path, with: data) { throw failure(code) }
    }

    // MARK: the three ways to write

    /// A new file, whole: a temporary file beside `path` takes its name with `link`, which (unlike
    /// `rename`) fails rather than replace a file that appeared meanwhile; then that one is
    /// written through. Returns the error number, or `nil`.
    private static func create(_ path: String, with data: Data) -> Int32? {
        switch temporary(beside: path, mode: 0o600, owner: nil, with: data) {
        case .success(let temporary):
            defer { unlink(temporary) }
            if link(temporary, path) == 0 { return nil }
            // EEXIST: someone made it meanwhile; another error: no hard links here. Either way
            // the kernel opens what is there now.
            return writeThrough(path, with: data)
        case .failure(let code) where [EACCES, EPERM, EROFS].contains(code.rawValue):
            return writeThrough(path, with: data)
        case .failure(let code):
            return code.rawValue
        }
    }

    /// The user's own regular file, replaced whole by a temporary file with its mode and group.
    /// `nil` when the directory cannot take a temporary file (the caller then writes in place);
    /// otherwise the outcome, `.some(nil)` for success.
    private static func replace(_ path: String, keeping info: stat, with data: Data) -> Int32?? {
        switch temporary(beside: path, mode: info.st_mode & 0o777, owner: (info.st_uid, info.st_gid), with: data) {
        case .success(let temporary):
            guard rename(temporary, path) == 0 else {
                let code = errno
                unlink(temporary)
                return .some(code)
            }
            return .some(nil)
        case .failure(let code) where [EACCES, EPERM, EROFS].contains(code.rawValue):
            return nil
        case .failure(let code):
            return .some(code.rawValue)
        }
    }

    /// What the kernel opens at `path`, written through; a new file is readable by its owner
    /// only. Returns the error number, or `nil`.
    private static func writeThrough(_ path: String, with data: Data) -> Int32? {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return errno }
        var code = data.withUnsafeBytes { StandardOutput.writeAll($0, to: descriptor) }
        if close(descriptor) != 0, code == nil, errno != EINTR { code = errno }
        return code
    }

    /// A temporary file beside `path` holding `data`, with `mode` and (when it differs from what
    /// a new file gets) `owner`; its path, or the error (nothing is left behind then).
    private static func temporary(beside path: String, mode: mode_t, owner: (uid_t, gid_t)?, with data: Data) -> Result<String, Errno> {
        let temporary = path + ".cachelog-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return .failure(Errno(errno)) }
        var code = data.withUnsafeBytes { StandardOutput.writeAll($0, to: descriptor) }
        var created = stat()
        if code == nil, let (uid, gid) = owner, fstat(descriptor, &created) == 0, created.st_uid != uid || created.st_gid != gid,
           fchown(descriptor, uid, gid) != 0 {
            // Replacing the file would change its owner or group: not this way (EPERM sends the
            // caller to writing in place).
            code = EPERM
        }
        if code == nil, fchmod(descriptor, mode) != 0 { code = errno }
        if close(descriptor) != 0, code == nil, errno != EINTR { code = errno }
        guard let code else { return .success(temporary) }
        unlink(temporary)
        return .failure(Errno(code))
    }

    // MARK: what a path names

    /// A descriptor named by `path`, seen by following its links (`/dev/stdout`, `/dev/fd/N`,
    /// `/proc/self/fd/N`): what such a link points to (`pipe:[123]`, or a file's path) is the
    /// descriptor's, written where the descriptor stands (a `>>` keeps appending). `nil` when
    /// `path` names no descriptor of this process.
    private static func descriptorNamed(by path: String) -> DescriptorTarget? {
        #if os(Linux)
        var current = path
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return nil }
            if let folder = realpath(directory(of: current), nil) {
                let parts = String(cString: folder).split(separator: "/")
                free(folder)
                // /proc/PID/fd, or /proc/PID/task/TID/fd: another process's descriptor is opened
                // through the link by the kernel, as any node is.
                if parts.first == "proc", parts.last == "fd", parts.count == 3 || (parts.count == 5 && parts[2] == "task"),
                   Int32(parts[1]) == getpid(), let number = Int32(current.split(separator: "/").last ?? "") {
                    return fcntl(number, F_GETFD) == -1 ? .refused(EBADF) : .descriptor(number)
                }
            }
            guard let target = linkTarget(current) else { return nil }
            current = target.hasPrefix("/") ? target : directory(of: current) + "/" + target
        }
        #endif
        // Elsewhere /dev/fd/N is a device, opened by the kernel.
        return nil
    }

    private enum DescriptorTarget {
        case descriptor(Int32)
        case refused(Int32)
    }

    /// The first link on the way to `path` (in any component, as the kernel walks it) that sits
    /// in a sticky, world-writable directory and belongs neither to this user nor to the
    /// directory's owner: the rule of Linux's `fs.protected_symlinks`, applied whether or not
    /// the kernel applies it. `nil` when there is none.
    private static func plantedLink(on path: String) -> String? {
        var pending = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var walked = path.hasPrefix("/") ? "" : "."
        var links = 0
        while !pending.isEmpty {
            let component = pending.removeFirst()
            let next = walked + "/" + component
            var info = stat()
            guard lstat(next, &info) == 0 else { return nil }  // the open reports what is missing
            guard info.st_mode & S_IFMT == S_IFLNK else {
                walked = next
                continue
            }
            var parent = stat()
            let shared = stat(walked.isEmpty ? "/" : walked, &parent) == 0
                && parent.st_mode & S_ISVTX != 0 && parent.st_mode & S_IWOTH != 0
            if shared && info.st_uid != geteuid() && info.st_uid != parent.st_uid { return next }
            links += 1
            guard links <= 40, let target = linkTarget(next) else { return nil }
            pending.insert(contentsOf: target.split(separator: "/", omittingEmptySubsequences: true).map(String.init), at: 0)
            if target.hasPrefix("/") { walked = "" }
        }
        return nil
    }

    /// Where `link` points; `nil` with `errno` set when it cannot be read, or is not UTF-8
    /// (which a path in a Swift String could not name exactly).
    private static func linkTarget(_ link: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX))
        let count = readlink(link, &buffer, buffer.count)
        guard count >= 0 else { return nil }
        guard let target = String(validating: buffer[0..<count], as: UTF8.self) else {
            errno = EILSEQ
            return nil
        }
        return target
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

/// An error number, as a `Result`'s failure.
private struct Errno: Error {
    let rawValue: Int32
    init(_ rawValue: Int32) { self.rawValue = rawValue }
}

/// `path` with every link and `..` resolved, or `nil` when it does not exist.
private func resolvedPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}
