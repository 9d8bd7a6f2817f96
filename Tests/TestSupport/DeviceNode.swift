import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A character device of the test's own, made with `mknod` in its temporary directory.
///
/// The rule every test here follows (Tests/README.md): a test touches nothing outside its own
/// temporary directory, whatever bug the code under test has. A test that needs a device (a sink
/// that takes everything, a disk that is always full) makes its own node and hands the tool that
/// path, never `/dev/null`, `/dev/full` or a link to them: a tool that follows links and renames
/// over what they name would replace the machine's device, and every process on the machine would
/// then write into a file. Replacing a node of the test's own harms nothing, and the test sees it.
public enum DeviceNode: Sendable {
    /// Takes every byte and reads as empty (as `/dev/null`: major 1, minor 3).
    case null
    /// Fails every write with ENOSPC (as `/dev/full`: major 1, minor 7).
    case full

    private var minor: UInt64 {
        switch self {
        case .null: 3
        case .full: 7
        }
    }

    /// Makes the node at `path` (inside the test's directory), readable and writable by all.
    /// Throws when the node cannot be made (`mknod` of a device takes CAP_MKNOD, which root has).
    public func make(at path: String) throws {
        // Linux's dev_t encoding of major 1 and a minor below 256 (glibc's makedev is a macro).
        let device = dev_t((1 << 8) | minor)
        guard mknod(path, S_IFCHR | 0o666, device) == 0 else {
            throw DeviceNodeError(path: path, code: errno)
        }
        // mknod's mode passes through the umask.
        chmod(path, 0o666)
    }

    /// Whether this process may make device nodes: tests that need one are enabled only then,
    /// and are skipped (never pointed at the system's own nodes) where it may not.
    public static let canMake: Bool = {
        guard let directory = try? TemporaryDirectory(prefix: "cachelog-mknod-probe") else { return false }
        return (try? DeviceNode.null.make(at: directory.path("probe"))) != nil
    }()
}

/// A device node that could not be made.
public struct DeviceNodeError: Error, CustomStringConvertible {
    public let path: String
    public let code: Int32
    public var description: String { "cannot make a device node at \(path): \(String(cString: strerror(code)))" }
}
