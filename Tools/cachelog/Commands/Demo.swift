import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LoopbackHTTP

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Walk through the whole story on a throwaway database and a local server.",
        discussion: HelpLayout.keepingIndentation("""
            Starts an HTTP server on 127.0.0.1 that serves a small film feed, and a database in a \
            temporary directory, then runs real cachelog commands against them: an online load, \
            an offline load served from the cache, the same eight days later (the cache is past its \
            7-day max age: exit 3), a validation that expires it, and the replay, state and audit \
            that tell the story afterwards. Nothing outside the temporary directory is touched, and \
            no request leaves this machine.

            Example:
              cachelog demo
              cachelog demo --keep     # keep the database to explore it afterwards
            """))

    @ParentCommand var parent: CacheLogCommand

    @Flag(help: "Keep the demo database and print its path, to explore it with other commands.")
    var keep = false

    /// The root command reads --db, --now and -v before any command is known; the demo makes a
    /// database and a clock of its own, and would silently ignore them.
    func validate() throws {
        let global = parent.global
        if global.db != nil || global.now != nil || global.verbose {
            throw ValidationError("demo takes no --db, --now or -v: it uses a database and a clock of its own")
        }
        if global.format != nil { throw ValidationError("demo takes no --format: it prints a walk-through as text") }
    }

    static let films = """
        [{"id":"2baf70d1-42bb-4437-b551-e5fed5a87abe","title":"Castle in the Sky","description":"The orphan Sheeta inherited a mysterious crystal that links her to the mythical sky-kingdom of Laputa.","image":"https://image.tmdb.org/t/p/w600_and_h900_bestv2/npOnzAbLh6VOIu3naU5QaEcTepo.jpg","url":"https://ghibliapi.vercel.app/films/2baf70d1-42bb-4437-b551-e5fed5a87abe"},\
        {"id":"12cfb892-aac0-4c5b-94af-521852e46d6a","title":"Grave of the Fireflies","description":"In the latter part of World War II, a boy and his sister, orphaned when their mother is killed in the firebombing of Tokyo, are left to survive on their own.","image":"https://image.tmdb.org/t/p/w600_and_h900_bestv2/qG3RYlIVpTYclR9TYIsy8p7m7AT.jpg","url":"https://ghibliapi.vercel.app/films/12cfb892-aac0-4c5b-94af-521852e46d6a"},\
        {"id":"58611129-2dbc-4a81-a72f-77ddfc1b1b49","title":"My Neighbor Totoro","description":"Two sisters move to the country with their father in order to be closer to their hospitalized mother, and discover the surrounding trees are inhabited by Totoros.","image":"https://image.tmdb.org/t/p/w600_and_h900_bestv2/rtGDOeG9LzoerkDGZF9dnVeLppL.jpg","url":"https://ghibliapi.vercel.app/films/58611129-2dbc-4a81-a72f-77ddfc1b1b49"}]
        """

    func run() async throws {
        try await Self.reportingFailures {
            let server = LoopbackHTTPServer(routes: ["/films.json": .json(Self.films)])
            let base = try server.start()
            defer { server.stop() }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cachelog-demo-\(UUID().uuidString.prefix(8))")
            defer { if !keep { try? FileManager.default.removeItem(at: directory) } }
            let db = directory.path
            let url = base.appendingPathComponent("films.json").absoluteString
            let runner = try DemoRunner(db: db)

            runner.say("CacheLog demo: a film feed cached in an event log")
            runner.say("  server   \(base.absoluteString) (this process, loopback only)")
            runner.say("  database \(db)")

            runner.step(1, "Online on 2026-12-01: the feed loads from the server and is cached.")
            try runner.run(["--now", "2026-12-01T10:00:00Z", "load", url, "--key", "films", "--contract", "films"])

            server.setHandler { _ in .status(500) }
            runner.step(2, "Two days later the server fails (HTTP 500): the 2-day-old cache is served.")
            try runner.run(["--now", "2026-12-03T10:00:00Z", "load", url, "--key", "films", "--contract", "films"])

            runner.step(3, "Eight days after the save, still offline: the cache is past its 7-day max age.")
            try runner.run(["--now", "2026-12-09T10:00:00Z", "load", url, "--key", "films", "--contract", "films"], expecting: 3)

            runner.step(4, "Validation (the cron job) expires the stale cache: an expire event removes it.")
            try runner.run(["--now", "2026-12-09T10:00:00Z", "validate", "--max-age", "7d"])

            runner.step(5, "The log replays the whole story.")
            try runner.run(["replay"])

            runner.step(6, "The state as of 2026-12-05 still shows the cache; today it is gone.")
            try runner.run(["state", "--as-of", "2026-12-05T00:00:00Z"])
            try runner.run(["--now", "2026-12-09T10:00:00Z", "state"])

            runner.step(7, "The audit answers \"why was it stale?\".")
            try runner.run(["--now", "2026-12-09T10:00:00Z", "audit", "--key", "films"])

            runner.say("")
            if keep {
                runner.say("The database is kept: explore it with  cachelog --db \(db) replay --format jsonl")
            } else {
                runner.say("Done; the demo database was removed. Run 'cachelog demo --keep' to explore it afterwards.")
            }
        }
    }
}
