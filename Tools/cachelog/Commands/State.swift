import ArgumentParser
import CacheLog
import FeedCache
import Foundation

struct State: AsyncParsableCommand, DatabaseCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the live cache entries, now or at a point in the past.",
        discussion: """
            The state of the cache (the projection of the log): for each key, its live put (seq, cache timestamp, payload \
            size) and the policy it was saved under: its max age (7d for a put saved before puts \
            recorded a policy), when it expires and whether it is fresh at --now (or at the date \
            given to --as-of), and its contract. JSON entries carry key, timestamp, seq, bytes, \
            maxAge (seconds), expires, fresh and contract (null when none). --as-of rebuilds it as it was right after a seq, or after the last event \
            recorded by a date. With --key, only that key's own records are read (through the key index), \
            however long the log. A stored timestamp that is not a finite number (a damaged or \
            hand-made record) is shown as nan, inf or -inf, and as null in JSON.

            Examples:
              cachelog state
              cachelog state --as-of 2026-12-05T00:00:00Z --format json | jq '.entries[].key'
              cachelog state --key films --as-of 12
              cachelog state --as-of 7d
            """)

    @ParentCommand var parent: CacheLogCommand

    @Option(help: ArgumentHelp("Only this key.", valueName: "name"))
    var key: String?

    @Option(name: .customLong("as-of"), parsing: .unconditional, help: ArgumentHelp(
        "A seq, a date (a bare day is its 00:00 UTC) or a duration before --now (7d or -7d: a week ago).",
        discussion: "Takes \(PositionArgument.forms).", valueName: "seq|date|duration"), transform: PositionArgument.parse)
    var asOf: PositionArgument?

    @Option(help: "Output format.")
    var format: TextOrJSON = .text

    func run() async throws {
        let clockNow = try global.clock()()
        let position = asOf?.position(now: clockNow)
        try await reading { log in
            let state: LogState
            if let key, !key.isEmpty {
                // One key: its own records through the key index, not the whole state.
                let (seq, entry) = try log.entry(key, asOf: position ?? .seq(.max))
                state = LogState(seq: seq, entries: entry.map { [$0] } ?? [])
            } else {
                var all = try position.map { try log.state(asOf: $0) } ?? log.state()
                // No key is empty: `--key ""` lists nothing.
                if key != nil { all.entries = [] }
                state = all
            }
            // Ages are as seen at the point asked for: a date given to --as-of, else the clock.
            var now = clockNow
            if case .date(let date)? = position { now = date }
            let out = StandardOutput()
            try out.show(StateReport(state, now: now), as: format) {
                out.line("as of seq \(state.seq): \(state.entries.count) live \(state.entries.count == 1 ? "entry" : "entries")")
                guard !state.entries.isEmpty else { return }
                out.line(Terminal.color("KEY                   CACHED AT             AGE       MAX AGE  FRESH     SEQ     BYTES", "1"))
                for entry in state.entries {
                    let maxAge = KeyPolicy.of(entry).maxAge
                    let fresh = CachePolicy(maxAge: maxAge).validate(entry.timestamp, against: now) ? "yes" : "no"
                    out.line("\(EventPrinter.pad(entry.key, 20))  \(EventPrinter.pad(DateParsing.string(entry.timestamp), 20))  \(EventPrinter.pad(DurationText.string(now.timeIntervalSince(entry.timestamp)), 8))  \(EventPrinter.pad(maxAge.description, 7))  \(EventPrinter.pad(fresh, 5))  \(EventPrinter.pad(String(entry.seq), 6, right: true))  \(EventPrinter.pad(String(entry.bytes), 8, right: true))")
                }
            }
        }
    }
}
