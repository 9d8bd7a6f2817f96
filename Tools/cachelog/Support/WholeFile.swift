import Foundation
#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif

/// A file written whole or not at all: the bytes go to a temporary file beside it, which is then
/// renamed over it, so that a reader (or an interrupted run) never sees half of it.
enum WholeFile {
    static func write(_ data: Data, to path: String) throws {
        let temporary = path + ".cachelog-\(getpid())"
        func failure() -> CLIFailure {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            return CLIFailure("cannot write \(path): \(reason)")
        }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard descriptor >= 0 else { throw failure() }
        let written = data.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count, let base = raw.baseAddress {
                let count = systemWrite(descriptor, base + offset, raw.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        guard written, close(descriptor) == 0 else {
            close(descriptor)
            throw failure()
        }
        guard rename(temporary, path) == 0 else { throw failure() }
    }
}
