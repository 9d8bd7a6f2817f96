import CacheLog
import CacheLogKit
import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A database the client cannot write still serves its caches, and every save says why it
/// failed: the path and the reason (a read-only file system, file modes), not "read-only".
@Suite("CacheClient: a database it cannot write", .hangGuard)
struct UnwritableDatabaseTests {
    /// A read-only bind mount of a database the app wrote before: the client opens it to read,
    /// its caches serve, and a save, a write and the tool name the path and the file system.
    /// Needs the right to mount (root on Linux); skipped with the reason otherwise.
    @Test func aDatabaseOnAReadOnlyFileSystem_servesItsCaches_andEachSaveNamesThePathAndTheFileSystem() async throws {
        let world = try ClientWorld(routes: ["/films.json": .json(Bodies.films), "/genres.json": .json(Bodies.genres)])
        let saved = try await world.client().feed("films", at: world.url("/films.json"), contract: .films).load()
        try #require(saved.cacheSave == .saved)
        try await waitUntilClosed(world.path)

        let mounts = try TemporaryDirectory(prefix: "cachelog-kit-ro")
        let readOnly = mounts.path("db")
        try FileManager.default.createDirectory(atPath: readOnly, withIntermediateDirectories: false)
        let bound = try await Self.mountReadOnly(world.path, at: readOnly)
        guard bound.isEmpty else {
            // A skip with its reason in the run's output, never a pass.
            try Test.cancel(Comment(rawValue: "cannot bind-mount read-only here (\(bound))"))
        }
        var failure: (any Error)?
        do {
            try await expectReadOnlyFileSystem(world, readOnly, cached: saved.items, savedAt: saved.timestamp)
        } catch {
            failure = error
        }
        _ = try? await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["umount", "-l", readOnly])
        if let failure { throw failure }
    }

    private func expectReadOnlyFileSystem(_ world: ClientWorld, _ path: String, cached: [Film], savedAt: Date) async throws {
        let denied = CacheLogError.notWritable(path: path, reason: .readOnlyFileSystem)
        let sentence = "\(path) is not writable: its file system is mounted read-only"
        #expect(denied.localizedDescription == sentence && "\(denied)" == sentence)

        var options = CacheClient.Options(clock: world.clock.function)
        options.durability = .unsynced
        let client = try CacheClient(directory: path, options: options)
        var films = client.feed("films", at: world.url("/films.json"), contract: .films)
        films.strategy = .cacheFirst
        let requests = world.server.requestCount

        let served = try await films.load()
        #expect(served.source == .cache(timestamp: savedAt) && served.items == cached, "a fresh cache serves: \(served.source), \(String(describing: served.remoteFailure))")
        #expect(world.server.requestCount == requests, "a fresh cache serves without a request")

        let writing = await #expect(throws: CacheLogError.self) { try await films.write(cached) }
        #expect(writing == denied, "a write names the path and the file system: \(String(describing: writing))")

        var genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        genres.strategy = .remoteFirst
        let fetched = try await genres.load()
        #expect(fetched.source == .remote && fetched.items.count == 2)
        #expect(fetched.cacheSave == .failed(denied), "the save says why it failed: \(fetched.cacheSave)")

        let validating = await #expect(throws: CacheLogError.self) { _ = try await client.validate() }
        #expect(validating == denied)

        let tool = try await ChildProcess.run(
            try builtProduct("cachelog"), ["--db", path, "--now", world.now, "load", world.url("/genres.json").absoluteString, "--key", "genres", "--contract", "genres"],
            timeout: .seconds(60))
        #expect(tool.status == 1 && tool.stdoutText.contains("not saved to the cache"), "\(tool.stdoutText)\(tool.stderrText)")
        #expect(tool.stderrText == "cachelog: the items were loaded from the remote but not cached: \(sentence)\n")
    }

    /// Binds `source` at `target`, then makes the binding read-only; what failed, or "".
    private static func mountReadOnly(_ source: String, at target: String) async throws -> String {
        #if os(Linux)
        let env = URL(fileURLWithPath: "/usr/bin/env")
        let bind = try? await ChildProcess.run(env, ["mount", "--bind", source, target])
        guard let bind, bind.status == 0 else { return bind.map { $0.stderrText } ?? "no mount tool" }
        let remount = try await ChildProcess.run(env, ["mount", "-o", "remount,ro,bind", target])
        if remount.status != 0 {
            _ = try? await ChildProcess.run(env, ["umount", "-l", target])
            return remount.stderrText
        }
        return ""
        #else
        return "bind mounts are Linux's"
        #endif
    }
}
