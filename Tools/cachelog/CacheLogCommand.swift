import ArgumentParser
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CacheLogReports
import FeedCacheLog
import Logging

@main
struct CacheLogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cachelog",
        abstract: "A durable, auditable feed cache: load feeds, replay and audit the cache's event log.",
        discussion: HelpLayout.keepingIndentation("""
            Every cache operation (put, delete, expire) is an event in an append-only, compressed \
            log in LMDB; the current cache (the state) is a projection of it. Start with 'cachelog demo'.

            Every command but demo takes the options below (--db, --now, -v), before or after \
            the command name.

            Durations: a whole number and a unit s, m, h, d or w: 90s, 15m, 12h, 7d, 1w (at most 36500d; write 36h, not 1.5d). Dates: RFC 3339 with Z or an offset (2026-12-01T10:00:00Z, 2026-12-01T11:00:00+01:00), or a bare date (2026-12-01: that day at 00:00 UTC). \
            --from, --to, --as-of and --before also take a seq, or a duration before --now (7d or -7d: a week ago); a bare date given to --to includes that whole day.

            Exit codes: 0 ok, 1 failure, 3 no usable data (load, image), 64 usage, 75 busy (a \
            reader who may not write the lock file read while another process kept writing: try \
            again), 128 + the \
            signal when interrupted by SIGHUP, SIGINT, SIGQUIT or SIGTERM (129, 130, 131, 143; a \
            save is whole in the log or absent; image caches nothing). A signal that arrives \
            once the command has written its output changes nothing.

            Examples:
              cachelog demo
              cachelog --db ./feeds.db load https://example.com/films.json --key films --contract films
              cachelog --db ./feeds.db replay --key films --format jsonl
            """),
        version: VersionReport.text,
        subcommands: [Load.self, Image.self, Searches.self, Replay.self, State.self, Audit.self, Report.self, Validate.self, Remove.self, Stats.self, Retention.self, Verify.self, Rebuild.self, Compact.self, Demo.self, Version.self])

    /// The options every command but demo takes. Declared here, they are read before and after
    /// the command name alike; the commands reach them through `@ParentCommand`.
    @OptionGroup var global: GlobalOptions

    static func main() async {
        // Under a file-size limit (`ulimit -f`) a write past it would kill the tool with SIGXFSZ;
        // ignored, the write fails with EFBIG, which the engine reports as a full disk.
        signal(SIGXFSZ, SIG_IGN)
        HelpLayout.settleWidth()
        Interruption.installDefaults()
        DamagedPages.installHandlers()
        // A reader that goes away (`| head`) would end the tool with SIGPIPE; ignored, the write
        // fails with EPIPE, and StandardOutput ends the run with exit 1.
        signal(SIGPIPE, SIG_IGN)
        // Started with stdin, stdout or stderr closed, the first file opened would take its
        // descriptor, and output meant for stdout would land in it (the database). Each closed
        // one gets /dev/null instead; output to a closed stdout is then reported as failed.
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            _ = open("/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY)
            if descriptor == 1 { StandardOutput.wasClosed = true }
        }
        // Swift reads arguments as UTF-8, replacing what is not: the keys "\xff" and "\xfe" would
        // both arrive as "\u{FFFD}" and name one cache. Refuse such bytes instead of merging keys.
        for index in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index], String(validatingCString: raw) == nil else { continue }
            Terminal.message("cachelog: argument \(index) is not valid UTF-8; keys, paths and URLs must be UTF-8")
            Exit.now(Exit.usage)
        }
        // stdout is for results only; every log line goes to stderr.
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        do {
            if #available(macOS 15, *) {
                try await withTaskExecutorPreference(MainQueueExecutor()) { try await parseAndRun() }
            } else {
                try await parseAndRun()
            }
        } catch {
            exit(usageErrorInOneLine: error)
        }
    }

    private static func parseAndRun() async throws {
        let command = try parseAsRoot(nil)
        try checkHelpTopics(of: command)
        // A command's output is written when its run ends (its StandardOutput is flushed as it
        // goes out of scope), so a signal after that finds the work done.
        defer { Interruption.commandEnded() }
        try await run(command)
    }

    /// Runs `command`, async or not. Generic, so that the cast starts from the command's own
    /// type: cast from the existential, the runtime first asked whether `any ParsableCommand`
    /// itself conforms to `AsyncParsableCommand`, a scan of every conformance record of the
    /// binary at every start (`callgrind` of `cachelog state`: 1 %).
    private static func run<Command: ParsableCommand>(_ command: Command) async throws {
        if var asyncCommand = command as? any AsyncParsableCommand {
            try await asyncCommand.run()
        } else {
            var command = command
            try command.run()
        }
    }

    /// Ends the run for `error`. A usage error is one line on stderr, as every failure is:
    /// `cachelog: <what is wrong> (see 'cachelog <command> --help')`, exit 64. Help, --version
    /// and exit codes go to ArgumentParser as they are.
    static func exit(usageErrorInOneLine error: any Error) -> Never {
        // `--version` anywhere prints the version; asked for JSON, it prints it as `version` does,
        // so that a script's `--format json` never gets a line of text.
        if exitCode(for: error) == .success, message(for: error) == VersionReport.text, jsonRequested {
            let out = StandardOutput()
            try? out.show(VersionReport(), as: .json) {}
            out.flush()
            Exit.now(Exit.ok)
        }
        guard !(error is ExitCode), exitCode(for: error) == .validationFailure else { exit(withError: error) }
        var text = message(for: error)
        // A value holding a line break would end the line in its middle: it is shown escaped.
        for argument in CommandLine.arguments.dropFirst() where argument.contains(where: \.isNewline) {
            text = text.replacing(argument, with: KeyText.escaped(argument))
        }
        text = text.split(separator: "\n").first.map(String.init) ?? "invalid command line"
        if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
        let command = CommandLine.arguments.dropFirst().first(where: commandNames.contains).map { "cachelog \($0)" } ?? "cachelog"
        Terminal.message("cachelog: \(text) (see '\(command) --help')")
        Exit.now(Exit.usage)
    }

    /// The commands' names, as typed.
    private static var commandNames: Set<String> {
        Set(configuration.subcommands.map { $0.configuration.commandName ?? String(describing: $0).lowercased() })
    }

    /// `cachelog help bogus` printed the main help and exited 0 (ArgumentParser's help command
    /// shows the nearest command it knows): a word after `help` that names no command is a
    /// usage error instead, as `cachelog bogus` is.
    ///
    /// The type's name by `_typeName`: `String(describing:)` asks the runtime whether the type
    /// conforms to four printing protocols, each a scan of every conformance record of the binary,
    /// at every start (`callgrind` of `cachelog state`: 7 % of its instructions).
    private static func checkHelpTopics(of command: any ParsableCommand) throws {
        guard _typeName(type(of: command), qualified: false) == "HelpCommand" else { return }
        var words: [String] = []
        var afterHelp = false, isValue = false
        for argument in CommandLine.arguments.dropFirst() {
            // The values of the options before the command name (--db help is a database).
            if isValue { isValue = false; continue }
            if ["--db", "--now", "--format"].contains(argument) { isValue = true; continue }
            if argument.hasPrefix("-") { continue }
            if afterHelp { words.append(argument) } else { afterHelp = argument == "help" }
        }
        if let unknown = words.first(where: { !commandNames.contains($0) && $0 != "help" }) {
            throw ValidationError("help: '\(unknown)' is not a command")
        }
    }

    /// `--format json` or `jsonl` (as one argument or two) anywhere on the command line.
    private static var jsonRequested: Bool {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let formats = zip(arguments, arguments.dropFirst()).filter { $0.0 == "--format" }.map(\.1)
            + arguments.filter { $0.hasPrefix("--format=") }.map { String($0.dropFirst("--format=".count)) }
        return formats.contains { $0 == "json" || $0 == "jsonl" }
    }
}
