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

/// Where `--out` puts bytes, as `curl -o` does. A regular file, or a path that does not exist yet,
/// is written whole or not at all: the bytes go to a temporary file beside it, which is then
/// renamed over it, so that a reader (or an interrupted run) never sees half of it. A symbolic
/// link is followed and the file it names is replaced that way (the link stays a link). Anything
/// else (a FIFO, a device, `/dev/stdout`, `/dev/fd/N`, a shell's `>(…)`) is written through, in
/// order: renaming over it would replace the node itself (as root, `/dev/null`) and feed nothing.
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
        let target = path.isEmpty ? nil : destination(path)
        if case .file(let file, _)? = target, let directory = resolvedPath(database),
           ["data.mdb", "lock.mdb"].contains(where: { resolvedPath(directory + "/" + $0) == resolvedPath(file) ?? file }) {
            throw ValidationError("--out names a file of the database at \(database); write the output elsewhere")
        }
        switch target {
        case nil, .refused(EISDIR)?: throw ValidationError("--out must name a file, not '\(path)'")
        // What the runtime opened before parsing is close-on-exec; what a caller gives is not.
        case .descriptor(let descriptor)? where fcntl(descriptor, F_GETFD) & FD_CLOEXEC == 0: givenDescriptors[path] = descriptor
        default: break
        }
    }

    static func write(_ data: Data, to path: String) throws {
        func failure(_ code: Int32) -> CLIFailure { CLIFailure("cannot write \(path): \(String(cString: strerror(code)))") }
        var target = destination(path)
        if case .descriptor(let descriptor) = target, givenDescriptors[path] != descriptor { target = .refused(EBADF) }
        switch target {
        case .file(let file, let mode):
            if let code = replace(file, mode: mode, with: data) { throw failure(code) }
        case .descriptor(let descriptor):
            if let code = data.withUnsafeBytes({ StandardOutput.writeAll($0, to: descriptor) }) { throw failure(code) }
        case .node:
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw failure(errno) }
            let code = data.withUnsafeBytes { StandardOutput.writeAll($0, to: descriptor) }
            if close(descriptor) != 0, code == nil, errno != EINTR { throw failure(errno) }
            if let code { throw failure(code) }
        case .refused(let code):
            throw failure(code)
        }
    }

    /// What writing to a path means.
    private enum Destination {
        /// A regular file, or a name not taken yet: replaced whole. `mode` is the permission bits
        /// of the file it replaces, which the new one keeps.
        case file(String, mode: mode_t?)
        /// One of this process's own descriptors, named through `/dev/fd` or `/proc/self/fd`:
        /// written where the descriptor stands (a `>>` keeps appending; a socket works too).
        case descriptor(Int32)
        /// A FIFO, a device, a socket, another process's descriptor: opened and written through.
        case node
        /// Nothing can be written there (a directory, a loop of links): the error.
        case refused(Int32)
    }

    /// Follows `path` link by link (as the kernel would, at most 40 links) to what it names.
    private static func destination(_ path: String) -> Destination {
        var current = path
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0 else {
                // Not there yet: created whole. (A missing directory fails at the temporary file.)
                return errno == ENOENT ? .file(current, mode: nil) : .refused(errno)
            }
            switch info.st_mode & S_IFMT {
            case S_IFREG: return .file(current, mode: info.st_mode & 0o777)
            case S_IFDIR: return .refused(EISDIR)
            case S_IFLNK:
                if let descriptor = descriptorLink(current) { return descriptor }
                guard let target = linkTarget(current) else { return .refused(errno) }
                current = target.hasPrefix("/") ? target : directory(of: current) + "/" + target
            default: return .node
            }
        }
        return .refused(ELOOP)
    }

    /// Writes `data` to a temporary file beside `file` and renames it over `file`; the error
    /// number when that fails (the temporary file is then removed).
    private static func replace(_ file: String, mode: mode_t?, with data: Data) -> Int32? {
        let temporary = file + ".cachelog-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return errno }
        var code = data.withUnsafeBytes { StandardOutput.writeAll($0, to: descriptor) }
        if code == nil, let mode, fchmod(descriptor, mode) != 0 { code = errno }
        if close(descriptor) != 0, code == nil, errno != EINTR { code = errno }
        if code == nil, rename(temporary, file) != 0 { code = errno }
        if code != nil { unlink(temporary) }
        return code
    }

    /// What a descriptor link stands for (`/proc/PID/fd/N`, reached as `/dev/fd/N` or through
    /// `/dev/stdout`); `nil` for any other link. What such a link points to (`pipe:[123]`, or a
    /// file's path) is the descriptor's, not a file to replace.
    private static func descriptorLink(_ link: String) -> Destination? {
        #if os(Linux)
        guard let folder = realpath(directory(of: link), nil) else { return nil }
        let parts = String(cString: folder).split(separator: "/")
        free(folder)
        // /proc/PID/fd, or /proc/PID/task/TID/fd.
        guard parts.first == "proc", parts.last == "fd", parts.count == 3 || (parts.count == 5 && parts[2] == "task"),
              let process = Int32(parts[1]) else { return nil }
        // Another process's descriptor: opened through the link, as any node is.
        guard process == getpid(), let number = Int32(link.split(separator: "/").last ?? "") else { return .node }
        guard fcntl(number, F_GETFD) != -1 else { return .refused(EBADF) }
        return .descriptor(number)
        #else
        // Elsewhere /dev/fd/N is a device (written through), not a link.
        return nil
        #endif
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

/// `path` with every link and `..` resolved, or `nil` when it does not exist.
private func resolvedPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}
