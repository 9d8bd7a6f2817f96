import Foundation
import LoopbackHTTP
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `--db` gets `--out`'s care: no link another user planted in a shared directory is followed,
/// no file is created where a dangling `data.mdb` or `lock.mdb` link points, and a database
/// whose files another user may write is refused for writing in one line, unless `--shared-db`
/// says it is shared on purpose. Root runs these (no file mode binds it), as the attacks target.
@Suite("--db refuses what another user arranged")
struct DatabasePathTests {
    /// The user who plants: nobody.
    private let planter: uid_t = 65534

    private func load(_ sandbox: Sandbox, db: String, _ extra: [String] = []) async throws -> CLIResult {
        try await sandbox.run(["--db", db, "--now", Day.dec1] + extra + ["load", sandbox.url("/films.json"), "--key", "films", "--contract", "films"])
    }

    private func serving() throws -> Sandbox {
        try Sandbox(serving: LoopbackHTTPServer.routes(["/films.json": .json(#"[{"id":"2baf70d1-42bb-4437-b551-e5fed5a87abe","title":"Castle in the Sky","description":"d","image":"https://example.com/a.jpg","url":"https://example.com/a"}]"#)]))
    }

    @Test func aLinkAnotherUserPlantedInAStickyDirectory_isNotFollowed_andNothingIsCreatedWhereItPoints() async throws {
        try #require(getuid() == 0, "planting another user's link needs root")
        let sandbox = try serving()
        let shared = sandbox.path("shared")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        #expect(chmod(shared, 0o1777) == 0)
        let target = sandbox.path("root-only/cache")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let link = shared + "/db"
        #expect(symlink(target, link) == 0 && lchown(link, planter, planter) == 0)

        let run = try await load(sandbox, db: link)
        #expect(run.status == ExitCode.failure, "\(run)")
        #expect(run.stderrLines == ["cachelog: refusing the database at \(link): \(link) is a link another user made in a shared directory"], "\(run)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target).isEmpty, "a database was created where the planted link points")

        // Root's own link there is followed, as the kernel's rule has it.
        #expect(lchown(link, 0, 0) == 0)
        let own = try await load(sandbox, db: link)
        #expect(own.status == ExitCode.ok, "\(own)")
        #expect(FileManager.default.fileExists(atPath: target + "/data.mdb"))
    }

    @Test(arguments: ["data.mdb", "lock.mdb"])
    func aDanglingLinkAtADatabaseFile_isRefused_andNoFileIsCreatedWhereItPoints(file: String) async throws {
        let sandbox = try serving()
        try FileManager.default.createDirectory(atPath: sandbox.db, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let target = sandbox.path("planted-\(file)")
        #expect(symlink(target, sandbox.db + "/" + file) == 0)

        for arguments in [["--now", Day.dec1, "state"], ["--now", Day.dec1, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films"]] {
            let run = try await sandbox.run(["--db", sandbox.db] + arguments)
            #expect(run.status == ExitCode.failure, "\(arguments): \(run)")
            #expect(run.stderrLines == ["cachelog: refusing the database at \(sandbox.db): its \(file) is a link to nothing, and a file would be created where it points"], "\(run)")
            #expect(!FileManager.default.fileExists(atPath: target), "\(arguments) created the link's target")
        }
    }

    @Test func aDatabaseAnotherUserPreparedWritableByAll_isRefusedForWriting_readable_andSharedOnPurposeWithAFlag() async throws {
        try #require(getuid() == 0, "another user's database needs root to prepare")
        let sandbox = try serving()
        try #require(try await load(sandbox, db: sandbox.db).status == ExitCode.ok)
        for name in ["", "/data.mdb", "/lock.mdb"] {
            #expect(chown(sandbox.db + name, planter, planter) == 0)
            #expect(chmod(sandbox.db + name, name.isEmpty ? 0o777 : 0o666) == 0)
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: sandbox.db + "/data.mdb"))

        let refused = try await sandbox.run(["--db", sandbox.db, "--now", Day.dec2, "validate"])
        #expect(refused.status == ExitCode.failure, "\(refused)")
        #expect(refused.stderrLines.count == 1 && refused.stderrLines.first?.hasPrefix(
            "cachelog: refusing the database at \(sandbox.db): its directory belongs to another user (uid \(planter)), who could read and change what is saved") == true,
                "\(refused)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.db + "/data.mdb")) == before, "a refused command wrote")

        let read = try await sandbox.run(["--db", sandbox.db, "--now", Day.dec2, "state"])
        #expect(read.status == ExitCode.ok && read.stdout.contains("films"), "\(read)")

        let shared = try await load(sandbox, db: sandbox.db, ["--shared-db"])
        #expect(shared.status == ExitCode.ok, "\(shared)")
    }
}
