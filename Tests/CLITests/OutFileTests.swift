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
@Suite("cachelog --out", .hangGuard)
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
            let result = try await sandbox.cachelog("report", "--out", path)
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
            for arguments in [image + [path], ["report", "--out", path]] {
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

    // MARK: what the kernel would refuse, and whose files they are

    /// The file's owner and mode.
    private func owner(_ path: String) -> (uid: uid_t, gid: gid_t, mode: mode_t)? {
        var info = stat()
        return lstat(path, &info) == 0 ? (info.st_uid, info.st_gid, info.st_mode & 0o7777) : nil
    }

    /// A shared directory like /tmp (sticky, world-writable) in the test's own directory, with a
    /// link in it that another user (`nobody`) made, pointing at a file of root's that only root
    /// may read, and a dangling one pointing where nothing is yet. Linux's fs.protected_symlinks
    /// refuses to follow such links for anyone but their owner; `--out` refuses them whether or
    /// not the kernel does, and the files they name stay as they were (or absent).
    @Test(.enabled(if: geteuid() == 0, "making another user's link takes root"))
    func out_aLinkAnotherUserPlantedInASharedDirectory_isNotFollowed_andWhatItNamesIsUntouched() async throws {
        let sandbox = try sandbox()
        let shared = sandbox.path("shared")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        chmod(shared, 0o1777)
        let victim = sandbox.path("victim.txt")
        try Data("root's secret".utf8).write(to: URL(fileURLWithPath: victim))
        chmod(victim, 0o600)
        let nobody: uid_t = 65534
        let planted = try link("shared/out.html", to: victim, in: sandbox)
        let dangling = try link("shared/poster.jpg", to: sandbox.path("created-by-root"), in: sandbox)
        try #require(lchown(planted, nobody, gid_t(nobody)) == 0 && lchown(dangling, nobody, gid_t(nobody)) == 0)

        let image = try await sandbox.cachelog("image", sandbox.url("/poster.jpg"), "--out", dangling)
        // Refused before anything is asked or saved: no request, no database.
        #expect(sandbox.server.requestCount == 0 && !FileManager.default.fileExists(atPath: sandbox.db))
        let seeded = try await sandbox.cachelog("image", sandbox.url("/poster.jpg"), "--out", sandbox.path("poster.jpg"))
        try #require(seeded.status == ExitCode.ok, "\(seeded)")
        let report = try await sandbox.cachelog("report", "--out", planted)

        for (result, path) in [(report, planted), (image, dangling)] {
            #expect(result.status == ExitCode.failure, "\(result)")
            #expect(result.stderrLines == ["cachelog: cannot write \(path): it is another user's link in a shared directory, which is not followed"],
                    "\(result)")
        }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "root's secret")
        #expect(owner(victim)?.mode == 0o600)
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("created-by-root")), "the dangling link's target was created")
        // A path that leads through such a link (a directory link) is refused, naming the link.
        let toDirectory = try link("shared/folder", to: sandbox.directory.path, in: sandbox)
        try #require(lchown(toDirectory, nobody, gid_t(nobody)) == 0)
        let through = try await sandbox.cachelog("report", "--out", toDirectory + "/victim.txt")
        #expect(through.stderrLines == ["cachelog: cannot write \(toDirectory)/victim.txt: it leads through \(toDirectory), another user's link in a shared directory, which is not followed"],
                "\(through)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "root's secret")

        // The same links are followed where the rule allows it: made by the user who runs the
        // tool, or by the shared directory's owner.
        try #require(lchown(planted, 0, 0) == 0)
        let followed = try await sandbox.cachelog("report", "--out", planted)
        #expect(followed.status == ExitCode.ok, "\(followed)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8).hasPrefix("<!doctype html>"))
    }

    /// `--out` over another user's file (root writing it, as `curl -o` run as root would) writes
    /// into it: it stays that user's, with its mode; a replacement would have made it root's.
    @Test(.enabled(if: geteuid() == 0, "a file of another user's takes root to make"))
    func out_anExistingFileOfAnotherUser_keepsItsOwnerAndMode() async throws {
        let sandbox = try sandbox()
        let target = sandbox.path("theirs.jpg")
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        try #require(chown(target, 65534, 65534) == 0 && chmod(target, 0o644) == 0)

        let result = try await sandbox.cachelog("image", sandbox.url("/poster.jpg"), "--out", target)

        #expect(result.status == ExitCode.ok && result.stderr.isEmpty, "\(result)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == ImageTests.poster)
        let kept = try #require(owner(target))
        #expect(kept.uid == 65534 && kept.gid == 65534 && kept.mode == 0o644, "\(kept)")
    }

    /// A file the user may write, in a directory the user may not (where no temporary file can
    /// go beside it): written in place, as `curl -o` writes it. Root runs without the
    /// capabilities that override file modes, so the modes bind it.
    @Test(.enabled(if: geteuid() == 0, "dropping root's overriding capabilities takes root"))
    func out_aWritableFile_inADirectoryTheUserCannotWrite_isWrittenInPlace() async throws {
        let sandbox = try sandbox()
        let seeded = try await sandbox.cachelog("image", sandbox.url("/poster.jpg"), "--format", "json")
        try #require(seeded.status == ExitCode.ok, "\(seeded)")
        let locked = sandbox.path("locked")
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
        let target = locked + "/poster.jpg"
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        chmod(target, 0o644)
        chmod(locked, 0o555)
        defer { chmod(locked, 0o755) }

        let result = try await sandbox.runAsReader("image", sandbox.url("/poster.jpg"), "--out", target)

        #expect(result.status == ExitCode.ok && result.stderr.isEmpty, "\(result)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == ImageTests.poster)
        #expect(try FileManager.default.contentsOfDirectory(atPath: locked) == ["poster.jpg"])
    }

    /// Reports and images carry keys and URLs: a file `--out` creates is its owner's alone, as
    /// the database is, under the usual umask 022; one that exists keeps its mode.
    @Test
    func out_aNewFile_isTheOwnersOnly_underUmask022_andAnExistingOne_keepsItsMode() async throws {
        let sandbox = try sandbox()
        let existing = sandbox.path("existing.html")
        try Data("old".utf8).write(to: URL(fileURLWithPath: existing))
        chmod(existing, 0o644)
        func withUmask022(_ arguments: [String]) async throws -> ChildProcess.Result {
            let command = ([sandbox.executable.path, "--db", sandbox.db] + arguments).map { "'\($0)'" }.joined(separator: " ")
            return try await ChildProcess.run(
                URL(fileURLWithPath: "/bin/sh"), ["-c", "umask 022; exec \(command)"], environment: sandbox.environment())
        }

        let image = try await withUmask022(["image", sandbox.url("/poster.jpg"), "--out", sandbox.path("new.jpg")])
        let report = try await withUmask022(["report", "--out", sandbox.path("new.html")])
        let again = try await withUmask022(["report", "--out", existing])

        for result in [image, report, again] {
            #expect(result.exited && result.status == 0, "\(result.stderrText)")
        }
        #expect(owner(sandbox.path("new.jpg"))?.mode == 0o600)
        #expect(owner(sandbox.path("new.html"))?.mode == 0o600)
        #expect(owner(existing)?.mode == 0o644)
        #expect(try String(contentsOfFile: existing, encoding: .utf8).hasPrefix("<!doctype html>"))
    }


    /// Another user swaps the name between a link to root's file and a file of their own, as fast
    /// as they can, while root writes there again and again: what the tool checked must be what
    /// it opens, so root's file is never written (a check by name and then an open by name let
    /// the link in after 59 runs).
    @Test(.enabled(if: geteuid() == 0, "another user's racing process takes root to start"))
    func out_aLinkSwappedInWhileTheToolWrites_isNeverFollowed() async throws {
        let sandbox = try sandbox()
        let seeded = try await sandbox.cachelog("image", sandbox.url("/poster.jpg"), "--out", sandbox.path("poster.jpg"))
        try #require(seeded.status == ExitCode.ok, "\(seeded)")
        let shared = sandbox.path("shared")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        chmod(shared, 0o1777)
        let victim = sandbox.path("victim.txt")
        try Data("root's secret".utf8).write(to: URL(fileURLWithPath: victim))
        chmod(victim, 0o600)
        // Runs as nobody until it finds the stop file.
        let racer = """
            import os, sys
            os.chdir(sys.argv[1])
            while not os.path.exists(sys.argv[3]):
                try: os.symlink(sys.argv[2], "race.link")
                except FileExistsError: pass
                os.rename("race.link", "race")
                with open("race.file", "w") as f: f.write("x")
                os.rename("race.file", "race")
            """
        let stop = sandbox.path("stop")
        let racing = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", racer, shared, victim, stop])
        defer { racing.stop() }
        let started = try await eventually(timeout: .seconds(300)) { FileManager.default.fileExists(atPath: shared + "/race") }
        try #require(started, "the racer never started")

        var written = 0
        for _ in 0..<150 {
            let result = try await sandbox.cachelog("report", "--out", shared + "/race")
            #expect(result.status == ExitCode.ok || result.status == ExitCode.failure, "\(result)")
            if result.status == ExitCode.ok { written += 1 }
            #expect(try String(contentsOfFile: victim, encoding: .utf8) == "root's secret", "root's file was written through the link")
        }
        _ = FileManager.default.createFile(atPath: stop, contents: Data())
        _ = await racing.finish(timeout: .seconds(30))
        print("race: \(written) of 150 reports written into the racer's file, none through its link")
    }

}
