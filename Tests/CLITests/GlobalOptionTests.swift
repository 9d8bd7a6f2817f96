import Foundation
import TestSupport
import Testing

/// --db, --now and -v belong to the root command: they are read, and checked, wherever they stand.
@Suite("global options", .hangGuard)
struct GlobalOptionTests {
    static let mistakes: [(arguments: [String], says: String)] = [
        (["--now", "next friday", "state"], "--now: 'next friday' is not a date"),
        (["state", "--now", "next friday"], "--now: 'next friday' is not a date"),
        (["--db", "", "state"], "--db is empty"),
        (["state", "--db", ""], "--db is empty"),
        (["demo", "--db", "somewhere"], "demo takes no --db"),
        (["--now", "2026-12-01", "demo"], "demo takes no --db"),
    ]

    @Test(arguments: mistakes)
    func mistakeInAGlobalOption_beforeOrAfterTheCommand_exits64_namingIt(arguments: [String], says: String) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(arguments)
        #expect(result.status == ExitCode.usage, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.first?.hasPrefix("cachelog: \(says)") == true, "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
    }

    @Test
    func rootHelp_documentsTheGlobalOptions() async throws {
        let sandbox = try Sandbox()
        let help = try await sandbox.run(["--help"])
        for option in ["--db <path>", "--now <date>", "-v, --verbose"] { #expect(help.stdout.contains(option), "\(option)") }
    }
}
