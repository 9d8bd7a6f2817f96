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

/// The data file's length against what LMDB needs of it: LMDB maps the file and reads pages
/// through the map, so a page past the end of a truncated file is a SIGBUS, not an error code.
/// Whether the pages the trees use are all in the file is ``PageTreeCheck``'s to say, before
/// any transaction touches one.
enum DataFileLength {
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
