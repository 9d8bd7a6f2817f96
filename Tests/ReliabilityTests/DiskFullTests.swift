import CacheLog
import FeedCache
import FeedCacheLog
import Foundation
import Seeding
import TestSupport
import Testing
@testable import CacheLog

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 6, item 5 (engine level): a full map grows by itself; a full disk fails the append with
/// a clear error and leaves the database unchanged and usable.
@Suite("Full map and full disk")
struct DiskFullTests {
    /// Items whose JSON does not compress much: `count` items of random hex.
    static func bulkyItems(_ count: Int, seed: UInt64, bytesEach: Int = 4096) -> [Item] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { id in
            Item(id: id, text: generator.bytes(bytesEach / 2).map { String(format: "%02x", $0) }.joined())
        }
    }

    @Test func fullMap_savesThroughTheFeedCacheStackFarPastATinyMap_growTheMapByThemselves() async throws {
        let dir = try TemporaryDirectory()
        let log = try EventLog(path: dir.path(), options: .init(initialMapSize: 64 << 10))
        let initial = log.environment.mapSize
        let loader = feedLoader(log)
        var last: [Item] = []
        for save in 0..<60 {
            last = Self.bulkyItems(4, seed: UInt64(save))
            try await loader.save(last)
        }
        #expect(try await loader.load() == last)
        #expect(log.environment.mapSize >= initial * 16)
        #expect(try log.lastSeq() == 120)
        #expect(try log.verify().isClean)
    }

    /// The disk fills up under a writer process: `cachelog-writer --file-size-limit` sets
    /// RLIMIT_FSIZE at the database's current size, so the commit's first write past the end of
    /// the data file fails (EFBIG) exactly where a full disk fails it (ENOSPC). This works for
    /// any user on any machine, unlike mounting a small file system. The save is larger than the
    /// zeros a synced commit keeps written ahead of the pages in use (256 KB here), which it would
    /// fill without growing the file.
    @Test func fullDisk_underAFileSizeLimit_theAppendFailsWithAClearError_andTheDatabaseIsUnchangedAndUsable() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path()
        do {
            let log = try EventLog(path: db)
            try await feedLoader(log).save(Self.bulkyItems(2, seed: 1))
        }
        try await waitUntilClosed(db)
        let before = try snapshot(db)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: db + "/data.mdb")[.size] as? Int)

        let failed = try await runWriter([db, "1", "--batch", "--payload-bytes", "1000000", "--file-size-limit", "\(size)"])
        #expect(failed.status == 1, "the writer must fail its append and exit, not die of SIGXFSZ")
        let efbig = String(cString: strerror(EFBIG))
        #expect(failed.stderr.contains("no room to write the database (\(efbig) during mdb_"), "stderr: \(failed.stderr)")
        #expect(failed.stderr.contains("nothing was written"), "stderr: \(failed.stderr)")
        #expect(failed.stdout.isEmpty, "nothing was acknowledged")

        // Unchanged: same last seq, same events, same state, verify clean.
        #expect(try snapshot(db) == before)

        // Usable once the limit is gone.
        let succeeded = try await runWriter([db, "1", "--batch", "--payload-bytes", "200000"])
        #expect(succeeded.status == 0, "stderr: \(succeeded.stderr)")
        #expect(succeeded.stdout == "\(before.lastSeq + 1) \(before.lastSeq + 2)\n")
        let log = try EventLog(path: db)
        #expect(try log.lastSeq() == before.lastSeq + 2)
        #expect(try log.verify().isClean)
        #expect(try await feedLoader(log).load() == Self.bulkyItems(2, seed: 1))
    }

    /// The disk fills up under this process: a 1 MiB tmpfs, filled by another file. Needs the right
    /// to mount (root on Linux); skipped with the reason otherwise. The file-size-limit test above
    /// covers the same path everywhere.
    @Test func fullDisk_onAFullTmpfs_theSaveFailsWithAClearError_andTheCacheIsUnchangedAndUsable() async throws {
        let dir = try TemporaryDirectory()
        let mountPoint = dir.path("tmpfs")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        #if os(Linux)
        let mounted = try? await runTool("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint])
        #else
        let mounted: (status: Int32, output: String)? = nil
        #endif
        guard let mounted, mounted.status == 0 else {
            let reason = "cannot mount a tmpfs here (\(mounted?.output.trimmingCharacters(in: .whitespacesAndNewlines) ?? "no mount tool")); the file-size-limit test covers a full disk"
            // A skip with its reason in the run's output, never a pass.
            try Test.cancel(Comment(rawValue: reason))
        }
        defer {
            // A defer cannot await: a lazy unmount returns at once.
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            umount.arguments = ["umount", "-l", mountPoint]
            try? umount.run()
            umount.waitUntilExit()
        }

        let db = mountPoint + "/db"
        let filler = mountPoint + "/filler"
        do {
            let log = try EventLog(path: db)
            let loader = feedLoader(log)
            let saved = Self.bulkyItems(2, seed: 7)
            try await loader.save(saved)
            let before = try log.lastSeq()

            // Fill the file system to the last byte.
            let filled = fill(filler)
            #expect(filled > 0)

            var thrown: (any Error)?
            do {
                try await loader.save(Self.bulkyItems(40, seed: 8))
            } catch {
                thrown = error
            }
            let error = try #require(thrown as? CacheLogError, "the save must fail with a CacheLogError, got \(String(describing: thrown))")
            // ENOSPC when a write finds no room; LMDB reports a short write (room for part of it)
            // as EIO. Either way a full disk is `storageFull`, so callers can tell it apart.
            guard case .storageFull(_, let code) = error else {
                Issue.record("a full disk must be storageFull, got \(error)")
                return
            }
            #expect(code.rawValue == ENOSPC || code.rawValue == EIO, "\(error)")
            #expect(code.description == String(cString: strerror(code.rawValue)))
            #expect(error.description.contains("no room to write the database"))

            // Unchanged.
            #expect(try log.lastSeq() == before)
            #expect(try log.verify().isClean)
            #expect(try await loader.load() == saved)

            // Usable once there is room again.
            try FileManager.default.removeItem(atPath: filler)
            let next = Self.bulkyItems(40, seed: 8)
            try await loader.save(next)
            #expect(try await loader.load() == next)
            #expect(try log.lastSeq() == before + 2)
            #expect(try log.verify().isClean)
        }
        try await waitUntilClosed(db)
        let unmounted = try await runTool("umount", [mountPoint])
        #expect(unmounted.status == 0, "\(unmounted.output)")
    }

    /// A new database on a file system with no room: LMDB sizes `lock.mdb` with ftruncate and
    /// writes it through a map, a SIGBUS on a full tmpfs; with room for the lock file only, its
    /// meta pages found room for half a page, which read as a truncated file at every later open.
    /// Each is a "no room" error from a process that lives, and the open works once there is room.
    @Test func aNewDatabase_onAFullTmpfs_isANoRoomError_neverASignal_andOpensOnceThereIsRoom() async throws {
        let dir = try TemporaryDirectory()
        let mountPoint = dir.path("tmpfs")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        #if os(Linux)
        let mounted = try? await runTool("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", mountPoint])
        #else
        let mounted: (status: Int32, output: String)? = nil
        #endif
        guard let mounted, mounted.status == 0 else {
            try Test.cancel(Comment(rawValue: "cannot mount a tmpfs here (\(mounted?.output.trimmingCharacters(in: .whitespacesAndNewlines) ?? "no mount tool"))"))
        }
        let writer = try builtProduct("cachelog-writer")
        let filler = mountPoint + "/filler"
        // No room at all, then room for the lock file and part of the meta pages (12 KiB).
        for (index, room) in [0, 12 << 10].enumerated() {
            let capacity = fill(filler)
            if room > 0 {
                try FileManager.default.removeItem(atPath: filler)
                #expect(fill(filler, limit: capacity - room) == capacity - room)
            }
            let db = mountPoint + "/db\(index)"
            let full = try await ChildProcess.run(writer, [db, "1", "--unsynced"])
            #expect(full.exited && full.status == 1, "died of signal \(full.status) with \(room) bytes free: \(full.stderrText)")
            #expect(full.stderrText.contains("no room to write the database"), "\(full.stderrText)")
            #expect(!full.stderrText.contains("truncated"), "\(full.stderrText)")

            try FileManager.default.removeItem(atPath: filler)
            let roomy = try await ChildProcess.run(writer, [db, "1", "--unsynced"])
            #expect(roomy.exited && roomy.status == 0, "with room again (\(room) bytes were free): \(roomy.stderrText)")
            try FileManager.default.removeItem(atPath: db)
        }
        let unmounted = try await runTool("umount", [mountPoint])
        #expect(unmounted.status == 0, "\(unmounted.output)")
    }

    // MARK: helpers

    struct Snapshot: Equatable {
        var lastSeq: UInt64
        var events: [LogItem]
        var state: LogState
        var clean: Bool
    }

    private func snapshot(_ db: String) throws -> Snapshot {
        let log = try EventLog(path: db, options: .init(readOnly: true))
        return Snapshot(lastSeq: try log.lastSeq(), events: try log.events(EventQuery(includePayload: true)),
                        state: try log.state(), clean: try log.verify().isClean)
    }

    /// Writes zeros to `path` until the file system refuses; returns the bytes written.
    /// Writes zeros to `path` until the file system is full, or `limit` bytes; the bytes written.
    private func fill(_ path: String, limit: Int = 256 << 20) -> Int {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0, count: 4096)
        var total = 0
        while total < limit { // bounded whatever the file system
            let written = chunk.withUnsafeBytes { write(fd, $0.baseAddress, min($0.count, limit - total)) }
            if written <= 0 { break }
            total += written
        }
        return total
    }

    private func runWriter(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let ended = try await ChildProcess.run(try builtProduct("cachelog-writer"), arguments)
        #expect(ended.exited)
        return (ended.status, ended.stdoutText, ended.stderrText)
    }

    private func runTool(_ name: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let ended = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), [name] + arguments)
        return (ended.status, ended.stdoutText + ended.stderrText)
    }
}
