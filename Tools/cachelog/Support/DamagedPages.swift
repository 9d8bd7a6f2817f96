#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A database damaged inside LMDB's own pages (the catalog of tables, a branch page) ends the
/// process: LMDB keeps no checksum on them, so it cannot report the damage as an error. It either
/// trips one of its assertions (it prints the failed check, then aborts) or follows a damaged
/// offset out of the map (a memory fault). The records the log itself writes carry checksums,
/// and `verify` names each damaged one; these pages it cannot reach.
///
/// The tool ends such a run with one line saying what happened and what to do, and exit status
/// 1, instead of a crash report and a death by signal. A fault from a bug of the tool's own ends
/// the same way (the line says "most likely"); with `SWIFT_BACKTRACE` set, the handlers are
/// left out and the Swift runtime's crash report shows where it happened.
enum DamagedPages {
    /// Installs the handlers for SIGABRT, SIGSEGV and SIGBUS. Called once, first thing in `main`.
    static func installHandlers() {
        guard getenv("SWIFT_BACKTRACE") == nil else { return }
        // A static is made on first use, which a signal handler must not be the one to do.
        guard aborted != nil, faulted != nil else { return }
        for number in [SIGABRT, SIGSEGV, SIGBUS] {
            signal(number, endRun)
        }
    }

    // Made before any signal: a handler may only `write` what exists already.
    nonisolated(unsafe) private static let aborted = line(
        "cachelog: stopped: a check inside LMDB failed (the line above names it), as a damaged page of the database makes it fail; "
            + repair)
    nonisolated(unsafe) private static let faulted = line(
        "cachelog: stopped by a memory fault, most likely LMDB reading a damaged page of the database; " + repair)
    private static let repair =
        "LMDB keeps no checksum on its own pages, so no command can read past it: restore the database directory from a backup, or remove it (a cache loses only its history)"

    private static func line(_ text: String) -> (pointer: UnsafeMutablePointer<CChar>, length: Int)? {
        guard let copy = strdup(text + "\n") else { return nil }
        return (copy, strlen(copy))
    }

    private static let endRun: @convention(c) (Int32) -> Void = { number in
        if let (pointer, length) = number == SIGABRT ? aborted : faulted { _ = write(2, pointer, length) }
        _exit(1)
    }
}
