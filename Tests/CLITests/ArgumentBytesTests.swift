import Foundation
import TestSupport
import Testing

/// Arguments the way a script's variables deliver them: bytes that are not UTF-8, and empty values.
@Suite("cachelog arguments as bytes", .hangGuard)
struct ArgumentBytesTests {
    /// Runs `cachelog --db DB load URL --key <the byte>` through sh, which passes the raw byte on.
    private func loadWithKeyByte(_ sandbox: Sandbox, octal: String) async throws -> ChildProcess.Result {
        try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", #"exec "$0" --db "$1" load "$2" --key "$(printf '\#(octal)')" --contract films"#,
             sandbox.executable.path, sandbox.db, sandbox.url("/films.json")],
            environment: sandbox.environment())
    }

    @Test
    func keysThatAreNotUTF8_areRefused_insteadOfMergedIntoOneReplacementCharacter() async throws {
        let sandbox = try Sandbox()
        for octal in [#"\377"#, #"\376"#] {
            let result = try await loadWithKeyByte(sandbox, octal: octal)
            #expect(result.exited && result.status == ExitCode.usage, "\(result.stderrText)")
            #expect(result.stderrText == "cachelog: argument 6 is not valid UTF-8; keys, paths and URLs must be UTF-8\n")
            #expect(result.stdout.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.db), "nothing was created")
    }

    /// Swift reads the environment as UTF-8, so `x\377y` became `x\u{FFFD}y`: another directory,
    /// made silently. Refused, as such bytes in `--db` are; `--db` still wins over the variable.
    @Test
    func aDatabasePathInTheEnvironmentThatIsNotUTF8_isRefused_andNothingIsCreated() async throws {
        let sandbox = try Sandbox()
        func load(_ variable: String, _ options: String = "") async throws -> ChildProcess.Result {
            try await ChildProcess.run(
                URL(fileURLWithPath: "/bin/sh"),
                ["-c", #"cd "$1" && export \#(variable)="$1/x$(printf '\377')y" && exec "$0" \#(options) load "$2" --key films"#,
                 sandbox.executable.path, sandbox.directory.path, sandbox.url("/films.json")],
                environment: sandbox.environment())
        }
        for variable in ["CACHELOG_DB", "XDG_CACHE_HOME"] {
            let result = try await load(variable)
            #expect(result.exited && result.status == ExitCode.usage, "\(variable): \(result.status) \(result.stderrText)")
            #expect(result.stderrText == "cachelog: \(variable) is not valid UTF-8; database paths must be UTF-8 (see 'cachelog load --help')\n")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path).filter { $0.hasPrefix("x") }.isEmpty,
                "a directory was created")
        let withDb = try await load("CACHELOG_DB", "--db '\(sandbox.db)'")
        #expect(withDb.exited && withDb.status == 0, "\(withDb.stderrText)")
    }

    @Test
    func anEmptyDB_isAUsageError_notTheDefaultDatabase() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["--db", "", "load", sandbox.url("/films.json"), "--key", "films"])
        #expect(result.status == ExitCode.usage, "\(result)")
        #expect(result.stderr.contains("--db is empty"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("xdg-cache/cachelog")), "the default database was not touched")
    }
}
