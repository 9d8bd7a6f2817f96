import Foundation
import LoopbackHTTP
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--out` (of `image` and `report`) as `curl -o` treats it: a regular file or a new path is
/// replaced whole; a symbolic link is followed and the file it names replaced, the link left a
/// link; anything else (a FIFO, a device, a descriptor) is written through; a failure is one line
/// and exit 1. Every node a test hands the tool is its own, in its temporary directory: devices
/// are made with `mknod` (``DeviceNode``), and stdout is reached through `/proc/self/fd/1`, which
/// nothing can replace. A link to the system's `/dev/null` would not keep it safe: the tool
/// follows links, so a build that renamed over what `--out` names would replace the machine's
/// device (Tests/README.md).
@Suite("cachelog --out", .timeLimit(.minutes(3)))
struct OutFileTests {
    private func sandbox() throws -> Sandbox {
        try Sandbox(serving: LoopbackHTTPServer.routes(["/poster.jpg": HTTPResponse(status: 200, body: ImageTests.poster)]))
    }

    /// The file type of `path` itself (S_IFLNK for a link), or nil when there is nothing there.
    private func fileType(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
    }

    private func link(_ name: String, to target: String, in sandbox: Sandbox) throws -> String {
        let path = sandbox.path(name)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        return path
    }

    @Test
    func out_aSymlink_isFollowed_theFileItNamesIsReplaced_andTheLinkStaysALink() async throws {
        let sandbox = try sandbox()
        try FileManager.default.createDirectory(atPath: sandbox.path("files"), withIntermediateDirectories: false)
        for (command, name) in [("image", "poster.jpg"), ("report", "history.html")] {
            let target = sandbox.path("files/\(name)")
            try Data("old".utf8).write(to: URL(fileURLWithPath: target))
            chmod(target, 0o640)
            // Relative, as `ln -s files/poster.jpg poster.jpg` makes it.
            let link = try link(name, to: "files/\(name)", in: sandbox)
            let arguments = command == "image" ? ["image", sandbox.url("/poster.jpg"), "--out", link] : ["report", "--out", link]

            let result = try await sandbox.run(["--db", sandbox.db, "--now", Day.dec1] + arguments)

            #expect(result.status == ExitCode.ok && result.stderr.isEmpty, "\(command): \(result)")
            #expect(fileType(link) == S_IFLNK, "\(command): the link was replaced by a file")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "files/\(name)")
            let written = try Data(contentsOf: URL(fileURLWithPath: target))
            #expect(command == "image" ? written == ImageTests.poster : String(decoding: written, as: UTF8.self).hasPrefix("<!doctype html>"),
                    "\(command): the link's target still holds \(written.count) bytes")
            let mode = try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int
            #expect(mode == 0o640, "\(command): the replaced file keeps its mode")
            #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.path("files")).sorted().filter { $0.hasPrefix(name) } == [name],
                    "\(command): nothing is left beside the target")
        }
    }

    @Test
    func out_aFIFO_isWrittenThrough_toItsReader_andStaysAFIFO() async throws {
        let sandbox = try sandbox()
        let fifo = sandbox.path("pipe")
        try #require(mkfifo(fifo, 0o600) == 0)
        let received = sandbox.path("received")
        let reader = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", "cat '\(fifo)' > '\(received)'"])

        let result = try await sandbox.cachelog("image", sandbox.url("/poster.jpg"), "--out", fifo)
        let read = await reader.finish(timeout: .seconds(10))

        #expect(result.status == ExitCode.ok && result.stderr.isEmpty, "\(result)")
        #expect(read.exited, "the reader never saw the writer close: nothing was written to the FIFO")
        #expect(try Data(contentsOf: URL(fileURLWithPath: received)) == ImageTests.poster)
        #expect(fileType(fifo) == S_IFIFO, "the FIFO was replaced")
    }

    /// A device named directly or through a link is written through and stays a device; a full
    /// one is one line and exit 1.
    @Test(.enabled(if: DeviceNode.canMake, "a device node of the test's own takes mknod (CAP_MKNOD)"))
    func out_aCharacterDevice_namedDirectlyOrThroughALink_isWrittenThrough_andAFullOne_isOneLine_exitOne() async throws {
        let sandbox = try sandbox()
        let null = sandbox.path("null")
        let full = sandbox.path("full")
        try DeviceNode.null.make(at: null)
        try DeviceNode.full.make(at: full)
        let toNull = try link("to-null", to: null, in: sandbox)
        // Relative, as `ln -s full to-full` makes it.
        let toFull = try link("to-full", to: "full", in: sandbox)

        for path in [null, toNull] {
            let result = try await sandbox.cachelog("image", sandbox.url("/poster.jpg"), "--out", path)
            #expect(result.status == ExitCode.ok && result.stderr.isEmpty, "\(path): \(result)")
        }
        for path in [full, toFull] {
            let result = try await sandbox.cachelog("--now", Day.dec1, "report", "--out", path)
            #expect(result.status == ExitCode.failure, "\(path): \(result)")
            #expect(result.stderrLines == ["cachelog: cannot write \(path): No space left on device"], "\(result)")
        }

        #expect(fileType(null) == S_IFCHR, "the null device node was replaced")
        #expect(fileType(full) == S_IFCHR, "the full device node was replaced")
        #expect(fileType(toNull) == S_IFLNK && fileType(toFull) == S_IFLNK)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path).filter { $0.contains(".cachelog-") }.isEmpty,
                "a temporary file was left beside a device")
    }

    /// `/dev/stdout` is a link to `/proc/self/fd/1`; the test links to the latter itself, so
    /// that no build can replace the system's `/dev/stdout` (procfs refuses any rename).
    @Test
    func out_theStdoutDescriptor_isWrittenWhereStdoutStands_appendingAfterWhatAShellRedirectionHolds() async throws {
        let sandbox = try sandbox()
        let stdout = try link("stdout", to: "/proc/self/fd/1", in: sandbox)

        let plain = try await ChildProcess.run(sandbox.executable, ["--db", sandbox.db, "image", sandbox.url("/poster.jpg"), "--out", stdout],
                                               environment: sandbox.environment())
        let log = sandbox.path("log.bin")
        try Data("before\n".utf8).write(to: URL(fileURLWithPath: log))
        let appended = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "exec '\(sandbox.executable.path)' --db '\(sandbox.db)' image '\(sandbox.url("/poster.jpg"))' --out '\(stdout)' >> '\(log)'"],
            environment: sandbox.environment())

        #expect(plain.exited && plain.status == 0 && plain.stderr.isEmpty, "\(plain.status) \(plain.stderrText)")
        #expect(plain.stdout == ImageTests.poster)
        #expect(appended.exited && appended.status == 0, "\(appended.status) \(appended.stderrText)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: log)) == Data("before\n".utf8) + ImageTests.poster)
        #expect(fileType(stdout) == S_IFLNK)
    }

    @Test
    func out_aProcessSubstitution_isWrittenThrough() async throws {
        let sandbox = try sandbox()
        let received = sandbox.path("received")

        let result = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"),
            ["-c", "'\(sandbox.executable.path)' --db '\(sandbox.db)' image '\(sandbox.url("/poster.jpg"))' --out >(cat > '\(received)'); status=$?; wait $!; exit $status"],
            environment: sandbox.environment())

        #expect(result.exited && result.status == 0 && result.stderr.isEmpty, "\(result.status) \(result.stderrText)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: received)) == ImageTests.poster)
    }

    /// The tool's own descriptors (the database's files, the remote's sockets) are not a caller's:
    /// `/dev/fd/N` naming one is refused, and the database stays whole.
    @Test
    func out_aDescriptorTheCallerDidNotGive_isRefused_andTheDatabaseStaysWhole() async throws {
        let sandbox = try sandbox()
        let first = try await sandbox.cachelog("image", sandbox.url("/poster.jpg"), "--format", "json")
        try #require(first.status == ExitCode.ok, "\(first)")

        for descriptor in 3...16 {
            let result = try await sandbox.cachelog("image", sandbox.url("/poster.jpg"), "--out", "/dev/fd/\(descriptor)", "--max-age", "1s")
            #expect(result.status == ExitCode.failure && result.stderrLines.count == 1, "/dev/fd/\(descriptor): \(result)")
        }

        let verified = try await sandbox.cachelog("verify")
        #expect(verified.status == ExitCode.ok, "\(verified)")
        let image = try await ChildProcess.run(sandbox.executable, ["--db", sandbox.db, "image", sandbox.url("/poster.jpg")], environment: sandbox.environment())
        #expect(image.stdout == ImageTests.poster)
    }

    @Test
    func out_aDirectoryIsAUsageError_andAPathThatCannotBeWritten_isOneLine_exitOne() async throws {
        let sandbox = try sandbox()
        let directory = sandbox.path("folder")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let toDirectory = try link("to-folder", to: directory, in: sandbox)
        let loop = try link("loop-a", to: "loop-b", in: sandbox)
        _ = try link("loop-b", to: "loop-a", in: sandbox)
        let image = ["image", sandbox.url("/poster.jpg"), "--out"]

        for path in [directory, toDirectory] {
            for arguments in [image + [path], ["--now", Day.dec1, "report", "--out", path]] {
                let result = try await sandbox.run(["--db", sandbox.db] + arguments)
                #expect(result.status == ExitCode.usage, "\(result)")
                #expect(result.stderrLines == ["cachelog: --out must name a file, not '\(path)' (see 'cachelog \(arguments.first == "image" ? "image" : "report") --help')"], "\(result)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        for (path, reason) in [(sandbox.path("missing/poster.jpg"), "No such file or directory"), (loop, "Too many levels of symbolic links")] {
            let result = try await sandbox.run(["--db", sandbox.db] + image + [path])
            #expect(result.status == ExitCode.failure, "\(result)")
            #expect(result.stderrLines == ["cachelog: cannot write \(path): \(reason)"], "\(result)")
        }
        #expect(fileType(loop) == S_IFLNK)
    }
}
