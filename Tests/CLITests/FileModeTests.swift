import Foundation
import TestSupport
import Testing

/// The cache is its owner's: a cached API response may hold personal data or tokens. What the
/// tool creates for a database is 0700 (directories, the default one and missing parents
/// included) and 0600 (its files), under the usual umask 022 that would leave them readable by
/// everyone; a directory the user made keeps its mode.
@Suite("File modes of a new database", .hangGuard)
struct FileModeTests {
    /// Runs `cachelog arguments` from a shell with umask 022, as a login shell has it.
    private func withUmask022(_ sandbox: Sandbox, _ arguments: [String], environment: [String: String] = [:]) async throws -> ChildProcess.Result {
        let command = ([sandbox.executable.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        return try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "umask 022; exec \(command)"], environment: sandbox.environment(environment))
    }

    private func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int, "no mode for \(path)")
    }

    @Test
    func aDatabaseTheToolCreates_isItsOwnersOnly_directoriesAndMissingParents0700_files0600() async throws {
        let sandbox = try Sandbox()
        let db = sandbox.path("feeds/2026/db")

        let loaded = try await withUmask022(sandbox, ["--db", db, "load", sandbox.url("/films.json"), "--key", "films", "--contract", "films"])

        #expect(loaded.exited && loaded.status == 0, "\(loaded.stderrText)")
        for directory in ["feeds", "feeds/2026", "feeds/2026/db"] {
            #expect(try mode(sandbox.path(directory)) == 0o700, "\(directory)")
        }
        for file in ["data.mdb", "lock.mdb"] {
            #expect(try mode(db + "/" + file) == 0o600, "\(file)")
        }
    }

    @Test
    func theDefaultDatabase_underXDG_CACHE_HOME_isCreated0700_withItsMissingParents() async throws {
        let sandbox = try Sandbox()
        let cacheHome = sandbox.path("home/.cache")

        let loaded = try await withUmask022(sandbox, ["load", sandbox.url("/films.json"), "--key", "films"], environment: ["XDG_CACHE_HOME": cacheHome])

        #expect(loaded.exited && loaded.status == 0, "\(loaded.stderrText)")
        for directory in ["home", "home/.cache", "home/.cache/cachelog"] {
            #expect(try mode(sandbox.path(directory)) == 0o700, "\(directory)")
        }
        #expect(try mode(cacheHome + "/cachelog/data.mdb") == 0o600)
    }

    @Test
    func aDirectoryTheUserMade_keepsItsMode_andTheFilesInItAre0600() async throws {
        let sandbox = try Sandbox()
        let db = sandbox.path("shared")
        try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o750])

        let loaded = try await withUmask022(sandbox, ["--db", db, "load", sandbox.url("/films.json"), "--key", "films"])

        #expect(loaded.exited && loaded.status == 0, "\(loaded.stderrText)")
        #expect(try mode(db) == 0o750)
        #expect(try mode(db + "/data.mdb") == 0o600 && mode(db + "/lock.mdb") == 0o600)
    }
}
