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

/// One commit of a data file, copied whole into a file of this process's own, for a reader
/// without the lock file to open in LMDB instead of the data file itself.
///
/// Why: such a reader is not in LMDB's reader table, so writers reuse the pages of the commit
/// it reads, and LMDB follows whatever a reused page now holds (Debian's liblmdb stops the
/// process on its assertions, `IS_LEAF(mp)` in `mdb_cursor_next`). No check after a read can
/// undo that; a copy no writer can reach can. The copy is whole when the newest commit is at
/// most one past the copied one once the copy ends (Format.md, "Reading without the lock file",
/// has the proof and the cost); otherwise it is made again, ``Environment/copyAttempts`` times
/// in all, then ``CacheLogError/overlappedWrites(path:)``.
///
/// The copy is an anonymous memory file on Linux (`memfd_create`), elsewhere (or where the
/// kernel refuses one) a temporary file unlinked as soon as it is made; LMDB opens it by its
/// descriptor's name (`/proc/self/fd/N`, `/dev/fd/N`). It takes memory (or temporary space) the
/// size of the pages in use, `DataFileLength`'s "used" size, until the environment moves on to a
/// newer copy or closes.
struct PrivateCopy {
    /// The copy, open read-write, and the name LMDB opens it by.
    let file: ScratchFile
    /// The commit it holds: the newest of the data file when it was copied.
    let commit: Int
    /// The last page of that commit.
    let lastPage: Int
    /// The length of pages 0 through `lastPage`, which LMDB maps; the copy holds what the data
    /// file held of them (a healthy file may end before `lastPage`: Format.md).
    let length: Int

    /// Opens `path`/data.mdb for reading, for a reader without the lock file.
    static func openDataFile(_ path: String) throws -> Int32 {
        let descriptor = open(path + "/data.mdb", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            switch errno {
            case ENOENT: throw CacheLogError.noDatabase(path: path)
            case EACCES: throw CacheLogError.notReadable(path: path + "/data.mdb")
            case let code: throw CacheLogError.lmdb("open(data.mdb)", code)
            }
        }
        return descriptor
    }

    /// Copies the newest commit of the data file open as `live` (database `path`, for errors).
    /// `directory`: make the copy a temporary file there, as where no memory file can be had.
    static func take(of live: Int32, path: String, attempts: Int, directory: String? = nil) throws -> PrivateCopy {
        // One file for every attempt: an attempt after the first writes over memory the first
        // already took, which is about a third quicker than taking it anew.
        let file = try ScratchFile.make(directory: directory)
        do {
            for _ in 0..<attempts {
                if let copy = try attempt(live, into: file, path: path) { return copy }
            }
            throw CacheLogError.overlappedWrites(path: path)
        } catch {
            file.discard()
            throw error
        }
    }

    /// One copy into `file`, or nil when more than one commit overlapped it.
    private static func attempt(_ live: Int32, into file: ScratchFile, path: String) throws -> PrivateCopy? {
        let before = try MetaPages.read(live, path: path)
        let slot = before.newest
        let meta = before.metas[slot]
        let (pages, overflow) = meta.lastPage.addingReportingOverflow(1)
        let (length, tooBig) = pages.multipliedReportingOverflow(by: before.pageSize)
        // Sized after the meta was read: a commit writes its pages before the meta that counts
        // them. A healthy file may still end before the commit's last page (pages a commit
        // allocated and freed, never written): the copy holds what the file holds of them, and
        // the page walk of every read refuses a tree page past the copy's end.
        let size = FileBytes.size(live)
        if overflow || tooBig {
            throw CacheLogError.truncated(path: path, size: size, expected: nil)
        }
        let held = min(length, size / before.pageSize * before.pageSize)
        guard held >= 2 * before.pageSize else { throw CacheLogError.truncated(path: path, size: size, expected: length) }
        // Exactly the pages copied: LMDB maps no byte of the copy that is not one of them.
        guard ftruncate(file.descriptor, off_t(held)) == 0 else { throw CacheLogError.lmdb(copyOperation, errno) }
        try copy(live, to: file.descriptor, length: held, path: path)
        let after = try MetaPages.read(live, path: path)
        let copied = try MetaPages.read(file.descriptor, path: path)
        guard after.metas[after.newest].commit <= meta.commit + 1,
              copied.metas[slot] == meta, after.metas[slot] == meta
        else { return nil }
        try meta.written.withUnsafeBytes { bytes in
            try FileBytes.write(file.descriptor, bytes, at: copied.writtenOffset(1 - slot), operation: copyOperation)
        }
        return PrivateCopy(file: file, commit: meta.commit, lastPage: meta.lastPage, length: length)
    }

    private static let copyOperation = "copying data.mdb to read it without its lock file"

    private static func copy(_ live: Int32, to target: Int32, length: Int, path: String) throws {
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var offset = 0
        while offset < length {
            let part = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(chunk, length - offset)])
            let read = try FileBytes.read(live, into: part, at: offset, operation: "pread(data.mdb)")
            guard read == part.count else {
                throw CacheLogError.truncated(path: path, size: FileBytes.size(live), expected: length)
            }
            try FileBytes.write(target, UnsafeRawBufferPointer(part), at: offset, operation: copyOperation)
            offset += read
        }
    }
}

/// A file of this process's own that no other process can name: what ``PrivateCopy`` copies into.
struct ScratchFile {
    let descriptor: Int32
    /// A name `open(2)` accepts for it, while `descriptor` is open.
    let path: String

    /// Closes this process's descriptor: the file is gone once nothing else holds it open or mapped.
    func discard() {
        _ = close(descriptor)
    }

    /// An anonymous memory file where the system has them (Linux), else a file in `directory`
    /// (by default `TMPDIR`, or /tmp), unlinked at once; always the latter when `directory` is given.
    static func make(directory: String? = nil) throws -> ScratchFile {
        #if os(Linux)
        // memfd_create(2) is not in the Glibc module (glibc declares it for _GNU_SOURCE only).
        if directory == nil, let create = memfdCreate {
            let descriptor = create("cachelog-copy", 1 /* MFD_CLOEXEC */)
            if descriptor >= 0 { return ScratchFile(descriptor: descriptor, path: "/proc/self/fd/\(descriptor)") }
        }
        #endif
        let directory = directory ?? getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/cachelog-copy.XXXXXX").utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { throw CacheLogError.lmdb("mkstemp(\(directory))", errno) }
        // Unlinked at once: nothing is left behind, whatever ends this process.
        template.withUnsafeBufferPointer { name in _ = name.baseAddress.map { unlink($0) } }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        #if os(Linux)
        return ScratchFile(descriptor: descriptor, path: "/proc/self/fd/\(descriptor)")
        #else
        return ScratchFile(descriptor: descriptor, path: "/dev/fd/\(descriptor)")
        #endif
    }

    #if os(Linux)
    private typealias MemfdCreate = @convention(c) (UnsafePointer<CChar>, UInt32) -> Int32
    private static let memfdCreate: MemfdCreate? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0) /* RTLD_DEFAULT */, "memfd_create") else { return nil }
        return unsafeBitCast(symbol, to: MemfdCreate.self)
    }()
    #endif
}

/// Whole reads and writes at an offset, past short counts and EINTR.
enum FileBytes {
    /// Reads into `buffer` from `offset`: the bytes read, fewer only at the end of the file.
    static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, operation: String) throws -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let count = pread(descriptor, base + done, buffer.count - done, off_t(offset + done))
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw CacheLogError.lmdb(operation, errno) }
            if count == 0 { break }
            done += count
        }
        return done
    }

    static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int, operation: String) throws {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let count = pwrite(descriptor, base + done, bytes.count - done, off_t(offset + done))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw CacheLogError.lmdb(operation, count < 0 ? errno : EIO) }
            done += count
        }
    }

    static func size(_ descriptor: Int32) -> Int {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? Int(info.st_size) : 0
    }
}
