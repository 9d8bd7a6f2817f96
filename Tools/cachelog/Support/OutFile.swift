import ArgumentParser
import CacheLog
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
        if case .descriptor(let descriptor)? = descriptorNamed(by: path) {
            if fcntl(descriptor, F_GETFD) & FD_CLOEXEC == 0 { givenDescriptors[path] = descriptor }
            return
        }
        // Refused before the command asks the remote anything or saves: the write would be refused.
        if case .failure(.planted(let link)) = PathWalk.resolve(path).map({ close($0.directory) }) {
            Terminal.message("cachelog: \(planted(path, link: link).message)")
            throw ExitCode(Exit.failure)
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
        // Walked again when the last component changed under us (another user swapped a link
        // in): what was checked is what gets written, or nothing is.
        for _ in 0..<8 {
            let resolved: PathWalk.Resolved
            switch PathWalk.resolve(path) {
            case .success(let found): resolved = found
            case .failure(.planted(let link)): throw planted(path, link: link)
            case .failure(.failed(let code)): throw failure(code)
            }
            defer { close(resolved.directory) }
            switch try write(data, at: resolved) {
            case .written: return
            case .failed(let code): throw failure(code)
            case .changed: continue
            }
        }
        throw CLIFailure("cannot write \(path): it kept changing while it was written (another process is replacing it)")
    }

    /// The refusal of a path through another user's link in a shared directory.
    private static func planted(_ path: String, link: String) -> CLIFailure {
        let which = link == path || link == "./" + path ? "it is" : "it leads through \(link),"
        return CLIFailure("cannot write \(path): \(which) another user's link in a shared directory, which is not followed")
    }

    private enum Written {
        case written
        case failed(Int32)
        /// What is at the name is not what the walk found: walk again.
        case changed
    }

    // MARK: the three ways to write

    /// Writes `data` at the resolved name: a new file whole, the user's own regular file replaced
    /// whole, anything else opened (never through a link) and written through.
    private static func write(_ data: Data, at resolved: PathWalk.Resolved) throws -> Written {
        guard let info = resolved.info else { return create(data, at: resolved) }
        let ownFile = info.st_mode & S_IFMT == S_IFREG && info.st_uid == geteuid() && info.st_nlink == 1
        if ownFile, let replaced = replace(data, at: resolved, keeping: info) { return replaced }
        return writeThrough(data, at: resolved, expecting: info)
    }

    /// A new file, whole: a temporary file beside it takes its name with `linkat`, which (unlike
    /// `rename`) fails rather than replace a file that appeared meanwhile. Readable by its owner
    /// only: reports and images carry keys and URLs.
    private static func create(_ data: Data, at resolved: PathWalk.Resolved) -> Written {
        switch temporary(in: resolved, mode: 0o600, owner: nil, with: data) {
        case .success(let temporary):
            defer { unlinkat(resolved.directory, temporary, 0) }
            if linkat(resolved.directory, temporary, resolved.directory, resolved.name, 0) == 0 { return .written }
            // EEXIST: someone made it meanwhile, walk again; another error: no hard links here.
            if errno == EEXIST { return .changed }
            return createInPlace(data, at: resolved)
        case .failure(let code) where [EACCES, EPERM, EROFS].contains(code.rawValue):
            return createInPlace(data, at: resolved)
        case .failure(let code):
            return .failed(code.rawValue)
        }
    }

    /// A new file opened at its name (a directory that takes no temporary file, a file system
    /// without hard links), never over one that appeared meanwhile.
    private static func createInPlace(_ data: Data, at resolved: PathWalk.Resolved) -> Written {
        let descriptor = openat(resolved.directory, resolved.name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return errno == EEXIST ? .changed : .failed(errno) }
        var code = data.withUnsafeBytes { StandardOutput.writeAll($0, to: descriptor) }
        if close(descriptor) != 0, code == nil, errno != EINTR { code = errno }
        if code != nil { unlinkat(resolved.directory, resolved.name, 0) }
        return code.map(Written.failed) ?? .written
    }

    /// The user's own regular file, replaced whole by a temporary file with its mode (but for
    /// setuid and setgid: new bytes must not run with another's rights) and group. `nil` when the
    /// directory cannot take a temporary file (the caller then writes in place).
    private static func replace(_ data: Data, at resolved: PathWalk.Resolved, keeping info: stat) -> Written? {
        switch temporary(in: resolved, mode: info.st_mode & 0o1777, owner: (info.st_uid, info.st_gid), with: data) {
        case .success(let temporary):
            // `renameat` replaces the name, whatever it is now, and follows nothing.
            guard renameat(resolved.directory, temporary, resolved.directory, resolved.name) == 0 else {
                let code = errno
                unlinkat(resolved.directory, temporary, 0)
                return .failed(code)
            }
            return .written
        case .failure(let code) where [EACCES, EPERM, EROFS].contains(code.rawValue):
            return nil
        case .failure(let code):
            return .failed(code.rawValue)
        }
    }

    /// What is at the name opened without following a link, checked to be what the walk found,
    /// and written through; a regular file is truncated first, as `>` does (after the check, so
    /// that a file swapped in is never truncated).
    private static func writeThrough(_ data: Data, at resolved: PathWalk.Resolved, expecting info: stat) -> Written {
        let descriptor = openat(resolved.directory, resolved.name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return errno == ELOOP ? .changed : .failed(errno) }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, opened.st_dev == info.st_dev, opened.st_ino == info.st_ino else {
            close(descriptor)
            return .changed
        }
        var code: Int32?
        if opened.st_mode & S_IFMT == S_IFREG, ftruncate(descriptor, 0) != 0 { code = errno }
        if code == nil { code = data.withUnsafeBytes { StandardOutput.writeAll($0, to: descriptor) } }
        if close(descriptor) != 0, code == nil, errno != EINTR { code = errno }
        return code.map(Written.failed) ?? .written
    }

    /// A temporary file beside the name holding `data`, with `mode` and (when it differs from
    /// what a new file gets) `owner`; its name, or the error (nothing is left behind then).
    private static func temporary(in resolved: PathWalk.Resolved, mode: mode_t, owner: (uid_t, gid_t)?, with data: Data) -> Result<String, Errno> {
        let temporary = resolved.name + ".cachelog-\(getpid())"
        let descriptor = openat(resolved.directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
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
        unlinkat(resolved.directory, temporary, 0)
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
