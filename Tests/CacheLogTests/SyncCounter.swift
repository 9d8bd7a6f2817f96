#if os(Linux)
import Foundation
import TestSupport
import Testing

/// Records every call a child process makes that flushes a file to the disk (`fdatasync`, `fsync`,
/// `msync`), with the file's path: a small library preloaded into the child (`LD_PRELOAD`) wraps
/// them, built here from C with the system's C compiler.
///
/// Reopening a database cannot tell whether a commit was flushed: the reopened file is read from
/// the page cache, synced or not. The calls can.
struct SyncCounter {
    private let library: URL
    private let directory: TemporaryDirectory

    private static let source = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <fcntl.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <sys/mman.h>
        #include <unistd.h>

        /* Appends "<call> <path of fd>" to the file $SYNC_LOG names, then makes the real call. */
        static void note(const char *call, int fd) {
            const char *log = getenv("SYNC_LOG");
            if (log == NULL) return;
            char link[64], path[1024] = "", line[1100];
            if (fd >= 0) {
                snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
                ssize_t length = readlink(link, path, sizeof path - 1);
                path[length > 0 ? length : 0] = 0;
            }
            int length = snprintf(line, sizeof line, "%s %s\n", call, path);
            int out = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
            if (out < 0) return;
            if (write(out, line, (size_t)length) < 0) { /* the count comes up short: the test fails */ }
            close(out);
        }

        int fdatasync(int fd) {
            note("fdatasync", fd);
            return ((int (*)(int))dlsym(RTLD_NEXT, "fdatasync"))(fd);
        }

        int fsync(int fd) {
            note("fsync", fd);
            return ((int (*)(int))dlsym(RTLD_NEXT, "fsync"))(fd);
        }

        int msync(void *address, size_t length, int flags) {
            note("msync", -1);
            return ((int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "msync"))(address, length, flags);
        }
        """#

    /// Builds the library in a directory of its own.
    init() async throws {
        directory = try TemporaryDirectory(prefix: "cachelog-sync-counter")
        let source = directory.url.appendingPathComponent("sync-counter.c")
        library = directory.url.appendingPathComponent("libsync-counter.so")
        try Data(Self.source.utf8).write(to: source)
        let compiler = try #require(Self.compiler(), "no C compiler (cc, clang or gcc) on PATH")
        let built = try await ChildProcess.run(compiler, ["-shared", "-fPIC", "-o", library.path, source.path, "-ldl"], timeout: .seconds(60))
        try #require(built.exited && built.status == 0, "building the sync counter failed: \(built.stderrText)")
    }

    /// Runs `executable` with the library preloaded and returns how it ended and the flushes it
    /// made, one "<call> <path>" per call, in order.
    func run(_ executable: URL, _ arguments: [String]) async throws -> (result: ChildProcess.Result, flushes: [String]) {
        let log = directory.url.appendingPathComponent("flushes-\(UUID().uuidString)")
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = library.path
        environment["SYNC_LOG"] = log.path
        let result = try await ChildProcess.run(executable, arguments, environment: environment, timeout: .seconds(60))
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return (result, text.split(separator: "\n").map(String.init))
    }

    private static func compiler() -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for name in ["cc", "clang", "gcc"] {
            for folder in path.split(separator: ":") {
                let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            }
        }
        return nil
    }
}
#endif
