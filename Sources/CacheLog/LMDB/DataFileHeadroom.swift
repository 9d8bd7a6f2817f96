internal import CLMDB
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

/// Keeps zeros written ahead of the pages LMDB appends to the data file, on Linux.
///
/// The log only grows: every commit writes pages past the end of data.mdb. On ext4 (and XFS) an
/// `fdatasync` of a file whose size changed must also commit the file system's journal (the new
/// size and blocks): one more flush of the disk in every synced commit, beside LMDB's two (the
/// data, then the meta page). Pages that overwrite blocks already written change no metadata, so
/// with zeros written ahead (a sixteenth of the pages in use, from 256 KB to 8 MB) the journal
/// is committed once per step instead: counted on a loop device, a synced save of the film feed
/// went from 3 flushes to 2 (Tools/Benchmarks/README.md). `fallocate` would not do: it leaves
/// unwritten extents, whose first write is a metadata change again. The syncs of a commit are
/// the same ones; there is less for each to wait for.
///
/// Runs only inside a write transaction: LMDB's writer lock keeps every other process from
/// writing the file meanwhile, and the zeros go past the file's end, beyond every page in use, so
/// they never touch a page LMDB wrote. A database file longer than its pages is one LMDB reads
/// as it always did. A failure (a full disk, a file-size limit) leaves the room it made: the
/// commit then grows the file as it did before, and reports its own error if it has one. On a
/// file system with less than 16 steps free nothing is written ahead: the last free megabytes of
/// a disk are not the cache's to take before it needs them.
///
/// Only small commits get zeros ahead. A group commit of 64 feeds appends about a megabyte: its
/// one journal commit is shared by all its saves already, and zeros written ahead of it would
/// double the bytes it writes (counted on a loop device: 42 MB instead of 23 MB for 1,024 saves).
///
/// Touched only inside write transactions, which this process runs one at a time.
final class DataFileHeadroom: @unchecked Sendable {
    static let minimumStep = 256 << 10
    static let maximumStep = 8 << 20
    private static let zeros = [UInt8](repeating: 0, count: 64 << 10)
    /// The pages in use at the last call: the commits since then appended the difference.
    private var lastUsed = 0

    /// Extends the data file with zeros when less than half a step is left past the pages in use.
    @available(*, noasync)
    func ensure(_ env: OpaquePointer) {
        #if os(Linux)
        var info = MDB_envinfo()
        var pageStats = MDB_stat()
        var fd: mdb_filehandle_t = -1
        var file = stat()
        guard mdb_env_info(env, &info) == MDB_SUCCESS, mdb_env_stat(env, &pageStats) == MDB_SUCCESS,
              mdb_env_get_fd(env, &fd) == MDB_SUCCESS, fstat(fd, &file) == 0
        else { return }
        let used = (info.me_last_pgno + 1) * Int(pageStats.ms_psize)
        let size = Int(file.st_size)
        let growth = lastUsed > 0 ? max(0, used - lastUsed) : 0
        lastUsed = used
        guard growth < Self.minimumStep / 2 else { return }
        let step = min(Self.maximumStep, max(Self.minimumStep, used / 16))
        // A file shorter than its pages is damage that the open refuses: it is not filled here.
        guard size >= used, size - used < step / 2 else { return }
        var volume = statvfs()
        guard fstatvfs(fd, &volume) == 0, UInt64(volume.f_bavail) * UInt64(volume.f_frsize) >= 16 * UInt64(step) else { return }
        // Never past the process's file-size limit: a write there is SIGXFSZ unless ignored.
        let end = Int(clamping: min(UInt64(used + step), DataFileLength.processFileSizeLimit ?? .max))
        var offset = size
        Self.zeros.withUnsafeBytes { zeros in
            while offset < end {
                let written = pwrite(fd, zeros.baseAddress, min(zeros.count, end - offset), off_t(offset))
                guard written > 0 else { return }
                offset += written
            }
        }
        #endif
    }
}
