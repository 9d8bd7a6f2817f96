import ArgumentParser
import CacheLogKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// Options every command but demo takes, declared by the root command (``CacheLogCommand``):
/// ArgumentParser reads a root command's options wherever they stand, before or after the
/// command name (`cachelog --db X replay`, `cachelog replay --db X`).
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The database directory.",
        discussion: "A leading ~ or ~/ is your home ($HOME), even when quoted. Default: $CACHELOG_DB, else $XDG_CACHE_HOME/cachelog, else ~/.cache/cachelog. Created on first write, for your user alone (directories 0700, files 0600); read-only commands never create it.",
        valueName: "path"))
    var db: String?

    // Unconditional: a value that starts with "-" (a year before 0000) is this option's value, which
    // the date parser then refuses by name, rather than "Missing value for '--now'".
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp(
        "The clock for this run, e.g. 2026-12-01T10:00:00Z (RFC 3339 with Z or an offset, or a bare date). Default: $CACHELOG_NOW, else the real clock.",
        discussion: "The what-if lever: \"would this cache be expired on Friday?\". It also stamps the events this run appends.",
        valueName: "date"))
    var now: String?

    @Option(name: .long, help: ArgumentHelp(
        "Output format for the command: text, json or jsonl, as the command's own --format (which wins).",
        valueName: "format"))
    var format: OutputFormat?

    @Flag(name: [.short, .long], help: ArgumentHelp(
        "For cron: print only changes and problems (validate: what it expired or deleted; load: nothing on success; compact: only when it removed something).",
        discussion: "Problems still go to stderr and set the exit code; --format json output is unchanged."))
    var quiet = false

    @Flag(name: [.short, .long], help: "Log what the engine does (map growth, retries) to stderr.")
    var verbose = false

    @Flag(name: .customLong("shared-db"), help: ArgumentHelp(
        "Write to a database whose directory or files other users own or may write.",
        discussion: "Off, a command that writes refuses such a database in one line (they could read what it saves, or change what it reads): a cache a group shares on purpose needs this flag. A link another user planted in a shared directory (/tmp) on the way to --db, or a data.mdb or lock.mdb that links to nothing, is refused either way."))
    var sharedDB = false

    func databasePath() -> String {
        if let db, !db.isEmpty { return Self.expandingHome(db) ?? db }
        if let path = EnvironmentVariables.value("CACHELOG_DB"), !path.isEmpty { return Self.expandingHome(path) ?? path }
        if let cache = EnvironmentVariables.value("XDG_CACHE_HOME"), !cache.isEmpty { return cache + "/cachelog" }
        // $HOME, as ~ is read, and as the XDG spec reads the default: the password database's home
        // only when $HOME is unset.
        return (Self.expandingHome("~") ?? "~") + "/.cache/cachelog"
    }

    /// `path` with a leading `~` or `~/` read from `$HOME`, as a shell would have done had the
    /// path not been quoted; `nil` for `~otheruser`, which the tool does not look up (see
    /// ``validate()``). A path not starting with `~` is returned as it is.
    static func expandingHome(_ path: String) -> String? {
        guard path.hasPrefix("~") else { return path }
        let rest = path.dropFirst()
        guard rest.isEmpty || rest.hasPrefix("/") else { return nil }
        let home = EnvironmentVariables.value("HOME").flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
        return home + rest
    }

    /// Checked while parsing, so that a bad date or database is a usage error (exit 64), reported
    /// before any command opens anything.
    func validate() throws {
        _ = try fixedNow()
        // An empty --db is usually an unset shell variable ("--db $DIR"): writing to the
        // default database instead would be a surprise.
        if let db, db.isEmpty { throw ValidationError("--db is empty; give a database directory, or leave --db out for the default") }
        // `~user` would need a password-database lookup; a quoted `~user/x` is more likely a
        // mistake than a wish, and must never become a directory named `~user`.
        let fromEnvironment = EnvironmentVariables.value("CACHELOG_DB")
        for (value, source) in [(db, "--db"), (db == nil ? fromEnvironment : nil, "CACHELOG_DB")] {
            guard let value, !value.isEmpty, Self.expandingHome(value) == nil else { continue }
            throw ValidationError("\(source): '\(value)' starts with ~user, which is not expanded; write the full path, or ~/ for your own home")
        }
        // Swift reads the environment as UTF-8, putting U+FFFD for what is not: such a path would
        // silently name another directory. Refused, as such bytes in --db are.
        let variables = db?.isEmpty == false ? [] : (fromEnvironment?.isEmpty == false ? ["CACHELOG_DB"] : ["CACHELOG_DB", "XDG_CACHE_HOME"])
        for name in variables where Self.isNotUTF8(environmentVariable: name) {
            throw ValidationError("\(name) is not valid UTF-8; database paths must be UTF-8")
        }
    }

    /// Whether the environment variable `name` is set to bytes that are not UTF-8.
    private static func isNotUTF8(environmentVariable name: String) -> Bool {
        guard let raw = getenv(name) else { return false }
        return String(validating: UnsafeRawBufferPointer(start: raw, count: strlen(raw)), as: UTF8.self) == nil
    }

    /// The fixed `--now` date, if one was given (here or in `CACHELOG_NOW`).
    func fixedNow() throws -> Date? {
        // The message names where the bad date came from: a variable set long ago in a shell
        // profile is easy to forget when the command line shows no --now.
        let (value, source) = now.map { ($0, "--now") } ?? (EnvironmentVariables.value("CACHELOG_NOW"), "CACHELOG_NOW")
        guard let value, !value.isEmpty else { return nil }
        guard let date = DateParsing.date(value) else {
            throw ValidationError("\(source): '\(value)' is not a date; use \(DateParsing.forms)")
        }
        return date
    }

    func clock() throws -> @Sendable () -> Date {
        if let fixed = try fixedNow() { return { fixed } }
        return { Date() }
    }

    func logger() -> Logger {
        var logger = Logger(label: "cachelog")
        // Failures reach the user as one line from the command itself; the log is for -v.
        logger.logLevel = verbose ? .debug : .error
        return logger
    }

    /// The library's entry point on the database, with this run's clock and logger: it creates
    /// the database only when it first saves something.
    func client(http: (any HTTPClient)? = nil, readOnly: Bool = false) throws -> CacheClient {
        let client = try CacheClient(
            directory: databasePath(),
            options: CacheClient.Options(clock: try clock(), http: http, logger: logger(), readOnly: readOnly, sharedWithOtherUsers: sharedDB))
        if !readOnly, let log = try client.existingLog() { warnIfNowIsBeforeTheLog(log) }
        return client
    }

    /// Opens the database for reading: never creates it.
    func openForReading() throws -> EventLog {
        try EventLog(path: databasePath(), options: .init(readOnly: true, clock: try clock(), logger: logger(), sharedWithOtherUsers: sharedDB))
    }

    /// Opens the database for writing; creates it only for commands that cache (`create`).
    /// `retaining: false` for a command that runs retention's passes itself and reports them:
    /// the writer then runs none of its own in the background, which would do part of the work
    /// unseen.
    func openForWriting(create: Bool = false, retaining: Bool = true) throws -> EventLog {
        let log = try EventLog(path: databasePath(), options: .init(
            createIfMissing: create, clock: try clock(), logger: logger(), automaticRetention: retaining, sharedWithOtherUsers: sharedDB))
        warnIfNowIsBeforeTheLog(log)
        return log
    }

    /// Recorded time never goes backward in the log: a --now before the last recorded event does
    /// not stamp what this run appends. Says so in one line on stderr rather than silently.
    private func warnIfNowIsBeforeTheLog(_ log: EventLog) {
        guard let fixed = try? fixedNow(),
              case .event(let last)? = try? log.events(EventQuery(reverse: true, limit: 1)).first,
              last.recordedAt.timeIntervalSince1970.isFinite, last.recordedAt > fixed
        else { return }
        Terminal.message("cachelog: --now \(DateParsing.string(fixed)) is before the last recorded event (seq \(last.seq), \(DateParsing.string(last.recordedAt))); what this run appends is recorded at that later time, since recorded time never goes backward (ages are still judged at --now)")
    }
}

/// A command that works on the database, with the options the root command read.
protocol DatabaseCommand: ParsableCommand {
    var parent: CacheLogCommand { get }
}

extension DatabaseCommand {
    var global: GlobalOptions { parent.global }

    /// Runs `body` on the database opened for reading, reporting its failures as every command does.
    func reading(_ body: (EventLog) async throws -> Void) async throws {
        try await Self.reportingFailures { try await body(try global.openForReading()) }
    }

    /// Runs `body` on the database opened for writing (and created when `create`), reporting its
    /// failures as every command does.
    func writing(create: Bool = false, _ body: (EventLog) async throws -> Void) async throws {
        try await Self.reportingFailures { try await body(try global.openForWriting(create: create)) }
    }
}
