import Foundation
import TestSupport
import Testing

/// What a cron job needs: --quiet prints only changes and problems, a database not made yet is
/// nothing to validate, an unknown key is an error, and the JSON gives the facts as fields.
@Suite("cron", .hangGuard)
struct CronTests {
    private func loaded(_ sandbox: Sandbox) async throws {
        for (now, key) in [(Day.dec1, "films"), (Day.dec3, "genres")] {
            let result = try await sandbox.cachelog("--now", now, "load", sandbox.url("/\(key).json"), "--key", key, "--contract", key)
            try #require(result.status == ExitCode.ok, "\(result)")
        }
    }

    @Test
    func quietValidate_printsOnlyWhatItExpired_andNothingWhenAllIsFresh() async throws {
        let sandbox = try Sandbox()
        try await loaded(sandbox)
        let allFresh = try await sandbox.cachelog("--now", Day.dec3, "validate", "--quiet")
        #expect(allFresh.status == ExitCode.ok, "\(allFresh)")
        #expect(allFresh.stdout.isEmpty, "\(allFresh)")
        // Dec 9: films (Dec 1) is 8d old and expires; genres (Dec 3) is fresh and not mentioned.
        let some = try await sandbox.cachelog("-q", "--now", Day.dec9, "validate")
        #expect(some.status == ExitCode.ok, "\(some)")
        #expect(some.stdoutLines.count == 1, "\(some)")
        #expect(some.stdoutLines.first?.hasPrefix("films: expired") == true, "\(some)")
        let loud = try await sandbox.cachelog("--now", Day.dec9, "validate")
        #expect(loud.stdoutLines.contains { $0.hasPrefix("genres: fresh") }, "\(loud)")
    }

    @Test
    func quietLoad_andQuietCompact_printNothingWhenAllIsWell() async throws {
        let sandbox = try Sandbox()
        let load = try await sandbox.cachelog("--quiet", "load", sandbox.url("/films.json"), "--key", "films")
        #expect(load.status == ExitCode.ok, "\(load)")
        #expect(load.stdout.isEmpty && load.stderr.isEmpty, "\(load)")
        let compact = try await sandbox.cachelog("--quiet", "compact", "--before", "1")
        #expect(compact.status == ExitCode.ok, "\(compact)")
        #expect(compact.stdout.isEmpty, "\(compact)")
    }

    /// A cron job that runs before the first load: compact answers as validate does, nothing
    /// to do, exit 0, and creates nothing (it exited 1).
    @Test
    func compactAndValidate_onADatabaseNotMadeYet_haveNothingToDo_exitZero_andCreateNothing() async throws {
        let sandbox = try Sandbox()
        for arguments in [["compact", "--keep", "30d", "-q"], ["validate", "-q"], ["compact", "--before", "1", "--format", "json"]] {
            let result = try await sandbox.run(["--db", sandbox.db] + arguments)
            #expect(result.status == ExitCode.ok, "\(arguments): \(result)")
            #expect(result.stderr.isEmpty, "\(arguments): \(result)")
            #expect(arguments.contains("-q") ? result.stdout.isEmpty : result.stdout == #"{"removed":0,"bytesFreed":0,"keptLive":0,"firstAvailable":0}"# + "\n",
                    "\(arguments): \(result)")
        }
        let loud = try await sandbox.cachelog("compact", "--keep", "30d")
        #expect(loud.status == ExitCode.ok && loud.stdoutLines == ["nothing to compact: no database at \(sandbox.db) yet"], "\(loud)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.db), "a database was created")
    }

    @Test
    func validateAnUnknownKey_saysThereIsNoSuchKey_exitsOne() async throws {
        let sandbox = try Sandbox()
        try await loaded(sandbox)
        for dryRun in [[], ["--dry-run"]] {
            let result = try await sandbox.run(["--db", sandbox.db, "validate", "--key", "nope"] + dryRun)
            #expect(result.status == ExitCode.failure, "\(result)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderrLines == ["cachelog: no key 'nope' in the log; 'cachelog state' lists the live keys"], "\(result)")
        }
    }

    @Test
    func validateJSON_givesTheFactsAsFields() async throws {
        let sandbox = try Sandbox()
        try await loaded(sandbox)
        let result = try await sandbox.cachelog("--now", Day.dec9, "validate", "--dry-run", "--format", "json")
        #expect(result.status == ExitCode.ok, "\(result)")
        let outcomes = try result.jsonArray()
        let films = try #require(outcomes.first { $0.string("key") == "films" })
        #expect(films.string("outcome") == "expired")
        #expect(films.string("detail") != nil)
        #expect(films.string("timestamp") == Day.dec1)
        #expect(films.int("age") == 691_200)
        #expect(films.int("maxAge") == 604_800)
        #expect(films.int("seq") == 2)
    }
}
