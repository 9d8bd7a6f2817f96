#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The exit codes, as `--help` and the README document them.
enum Exit {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    /// Neither the remote nor the cache had usable data.
    static let noUsableData: Int32 = 3
    /// Bad command line (ArgumentParser's validation errors use the same code).
    static let usage: Int32 = 64
    /// The database was busy: a reader who may not write its lock file read while another
    /// process committed again and again (sysexits' EX_TEMPFAIL). Nothing is wrong; try again.
    static let busy: Int32 = 75

    /// Ends the process with `code` (C's `exit`, which flushes its streams): inside a command,
    /// `exit` names ArgumentParser's `exit(withError:)`.
    static func now(_ code: Int32) -> Never {
        exit(code)
    }
}
