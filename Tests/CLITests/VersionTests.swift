import Foundation
import TestSupport
import Testing
import CacheLog

/// One version, from the library: `--version`, `version` and `version --format json` agree.
@Suite("version", .hangGuard)
struct VersionTests {
    @Test
    func versionFlag_andCommand_printTheLibrarysVersion_andDatabaseFormat() async throws {
        let sandbox = try Sandbox()
        let expected = "cachelog \(EventLog.version) (database format \(EventLog.databaseFormat))"
        for arguments in [["--version"], ["version"]] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == ExitCode.ok, "\(result)")
            #expect(result.stdoutLines == [expected], "\(result)")
            #expect(result.stderr.isEmpty)
        }
        let json = try await sandbox.run(["version", "--format", "json"])
        #expect(json.status == ExitCode.ok, "\(json)")
        #expect(try json.json().string("version") == EventLog.version)
        #expect(try json.json().int("databaseFormat") == Int(EventLog.databaseFormat))
    }

    /// Found by cli-fuzz: `--version` beside `--format json` printed a line of text.
    @Test(arguments: [["stats", "--format", "json", "--version"], ["--format=jsonl", "verify", "--version"], ["version", "--version", "--format", "json"]])
    func versionFlag_withAJSONFormat_printsJSON(_ arguments: [String]) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(arguments)
        #expect(result.status == ExitCode.ok, "\(result)")
        #expect(result.stdoutLines == [#"{"version":"\#(EventLog.version)","databaseFormat":\#(EventLog.databaseFormat)}"#], "\(result)")
    }
}
