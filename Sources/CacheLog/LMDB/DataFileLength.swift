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

/// LMDB maps the data file and reads pages through the map: a page past the end of a truncated
/// file is a SIGBUS, not an error code. These checks compare the file with what LMDB's meta says
/// is in use before any transaction touches a page.
enum DataFileLength {
    /// Refuses a data file shorter than the pages its meta says are in use. The meta pages
    /// themselves were read with `pread` by `mdb_env_open`, which fails cleanly on a file too
    /// short to hold them; a file of size 0 is one that `mdb_env_open` has just created.
    ///
    /// The meta is read before the file's size: another process may commit in between, and a
    /// commit writes its pages (growing the file) before the meta that counts them, so a size
    /// taken after the meta is never short of it. Taken the other way round, a commit in between
    /// made a healthy, growing database look truncated.
    static func check(_ env: OpaquePointer, path: String) throws {
        var info = MDB_envinfo()
        try lmdbCheck(mdb_env_info(env, &info), "mdb_env_info")
        var pageStats = MDB_stat()
        try lmdbCheck(mdb_env_stat(env, &pageStats), "mdb_env_stat")
        var fd: mdb_filehandle_t = -1
        try lmdbCheck(mdb_env_get_fd(env, &fd), "mdb_env_get_fd")
        var file = stat()
        guard fstat(fd, &file) == 0 else { throw CacheLogError.lmdb("fstat(data.mdb)", errno) }
        let (pages, overflow) = info.me_last_pgno.addingReportingOverflow(1)
        let (needed, tooBig) = pages.multipliedReportingOverflow(by: Int(pageStats.ms_psize))
        let size = Int(file.st_size)
        if overflow || tooBig || size < needed {
            throw CacheLogError.truncated(path: path, size: size, expected: tooBig || overflow ? nil : needed)
        }
    }

    /// The size of `path`/data.mdb, when it exists.
    static func dataFileSize(_ path: String) -> Int? {
        var file = stat()
        guard stat(path + "/data.mdb", &file) == 0 else { return nil }
        return Int(file.st_size)
    }

    /// The longest file this process may write (RLIMIT_FSIZE), when it is limited.
    static var processFileSizeLimit: UInt64? {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
        #else
        let resource = RLIMIT_FSIZE
        #endif
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return UInt64(limit.rlim_cur)
    }

    /// An open that failed on a data file too short for LMDB's two meta pages: an existing file
    /// cut short (a new one is created under LMDB's exclusive lock before anyone else opens it).
    static func tooShortForMetaPages(_ path: String) -> Bool {
        guard let size = dataFileSize(path) else { return false }
        return size < 2 * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
