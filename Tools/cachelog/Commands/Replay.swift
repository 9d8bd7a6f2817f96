import ArgumentParser
import CacheLog

struct Replay: AsyncParsableCommand, DatabaseCommand, FormattedCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Print the history: one event per line.",
        discussion: HelpLayout.keepingIndentation("""
            Every put, delete and expire in the order they were appended. JSON lines carry seq, at \
            (when recorded), type, key, and per type: timestamp, bytes/storedBytes, and the policy \
            it was saved under, maxAge in seconds and contract (put; null when the put recorded \
            none), origin (put: "written" by the app, or "fetched" by a load), reason (delete), timestamp and maxAge in seconds (expire); --payload adds the payload (when it \
            is JSON, its bytes exactly as stored, numbers and escapes as written, without the \
            whitespace between tokens; else base64). A record that fails its checks is printed as \
            type "corrupt" and the replay goes on. A stored date or max age that is not a finite \
            number (a damaged or hand-made record) is shown as nan, inf or -inf, and as null in \
            JSON; a date outside the years 0000-9999 as @ and its seconds since 1970.

            Examples:
              cachelog replay
              cachelog replay --key films --type expire --format jsonl | jq .timestamp
              cachelog replay --from 2026-12-01 --to 2026-12-08 --reverse --limit 20
              cachelog replay --from 24h
              cachelog replay --follow --format jsonl
            """))

    @ParentCommand var parent: CacheLogCommand

    @Option(help: ArgumentHelp("Only events about this key.", valueName: "name"))
    var key: String?

    @Option(name: .customLong("type"), help: ArgumentHelp("Only this type (put, delete, expire); repeat for several.", valueName: "type"))
    var types: [EventKindArgument] = []

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "First event: a seq, a date or a duration before --now (recorded at or after).",
        discussion: "Takes \(PositionArgument.forms).", valueName: "seq|date|duration"), transform: PositionArgument.parse)
    var from: PositionArgument?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Last event: a seq, a date or a duration before --now (recorded at or before); a bare day (2026-12-08) includes that whole day.",
        discussion: "Takes \(PositionArgument.forms).", valueName: "seq|date|duration"), transform: PositionArgument.parse)
    var to: PositionArgument?

    @Option(parsing: .unconditional, help: ArgumentHelp("At most this many events.", valueName: "n"))
    var limit: Int?

    @Flag(help: "Newest first.")
    var reverse = false

    @Flag(help: "Keep printing events as they are appended (by any process) until interrupted, or until --to: a seq once it is in the log, a date once the clock (--now) or an event recorded later is past it.")
    var follow = false

    @Flag(help: "Include each put's payload.")
    var payload = false

    @Option(name: .customLong("format"), help: StreamFormat.help)
    var formatOption: StreamFormat?

    /// Replay prints a stream of events: text or JSON lines.
    var format: TextOrJSONLines { chosenFormat.stream ?? .jsonl }

    func validate() throws {
        if chosenFormat.stream == nil { throw ValidationError("replay prints one event per line: use --format jsonl") }
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        if follow && reverse { throw ValidationError("--follow reads forward; drop --reverse") }
    }

    func run() async throws {
        // Relative positions count back from the run's clock.
        let now = try global.clock()()
        try await reading { log in
            let query = EventQuery(
                from: from?.position(now: now), to: to?.position(now: now, inclusiveDay: true), key: key,
                kinds: types.isEmpty ? nil : Set(types.map(\.kind)), reverse: reverse, limit: limit,
                includePayload: payload)
            let out = StandardOutput()
            let printer = EventPrinter(format: format, output: out, byHand: !follow)
            printer.header()
            var count = 0
            if follow {
                for try await item in log.follow(query) {
                    try printer.print(item)
                    out.flush()
                }
            } else {
                try log.forEachEvent(query) { item in
                    try printer.print(item)
                    count += 1
                    if count % 100_000 == 0 { Terminal.progress("replayed \(count) events…") }
                    return true
                }
                Terminal.endProgress()
            }
            out.flush()
        }
    }
}
