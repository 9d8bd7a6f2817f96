import Foundation
import TestSupport
import Testing

/// A quoted `~` (`--db '~/feeds'`, `CACHELOG_DB="~/feeds"`) is the home directory, as the shell
/// would have made it: never a directory named `~` in the working directory.
@Suite("~ in database paths", .hangGuard)
struct HomeDirectoryTests {
    @Test
    func aLeadingTilde_inDbOrCACHELOG_DB_isHOME() async throws {
        let sandbox = try Sandbox()
        let home = sandbox.path("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let byOption = try await sandbox.run(["--db", "~/feeds.db", "load", sandbox.url("/films.json"), "--key", "films"], environment: ["HOME": home])
        #expect(byOption.status == ExitCode.ok, "\(byOption)")
        #expect(FileManager.default.fileExists(atPath: home + "/feeds.db/data.mdb"))

        let byVariable = try await sandbox.run(["state", "--format", "json"], environment: ["HOME": home, "CACHELOG_DB": "~/feeds.db"])
        #expect(byVariable.status == ExitCode.ok, "\(byVariable)")
        #expect((try byVariable.json()["entries"] as? [[String: Any]])?.count == 1)
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/~"))
    }

    @Test(arguments: [(["--db", "~bob/feeds.db", "state"], [String: String](), "--db: '~bob/feeds.db'"),
                      (["state"], ["CACHELOG_DB": "~bob"], "CACHELOG_DB: '~bob'")])
    func tildeUser_isRefused_withUsage(arguments: [String], environment: [String: String], says: String) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(arguments, environment: environment)
        #expect(result.status == ExitCode.usage, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.first?.contains(says) == true, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/~bob"))
    }
}
