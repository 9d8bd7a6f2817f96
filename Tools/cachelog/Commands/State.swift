import ArgumentParser
import CacheLog
import FeedCache
import FeedCacheLog
import Foundation

struct State: AsyncParsableCommand, DatabaseCommand, DocumentCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Show the live cache entries, now or at a point in the past.",
        discussion: HelpLayout.keepingIndentation("""
            The state of the cache (the projection of the log): for each key, its live put (seq, cache timestamp, payload \
            size) and the policy it was saved under: its max age (7d for a put saved before puts \
            recorded a policy), when it expires and whether it is fresh at --now (or at the date \
            given to --as-of), and its contract. JSON entries carry key, timestamp, seq, bytes, \
            maxAge (seconds), expires, fresh and contract (null when none), and with --payload, payload: what the cache held (its JSON as stored, else base64). --as-of rebuilds it as it was right after a seq, or after the last event \
            recorded by a date. With --key, only that key's own records are read (through the key index), \
            however long the log. A stored timestamp that is not a finite number (a damaged or \
            hand-made record) is shown as nan, inf or -inf, and as null in JSON.

            Examples:
              cachelog state
              cachelog state --as-of 2026-12-05T00:00:00Z --format json | jq '.entries[].key'
              cachelog state --key films --as-of 12
              cachelog state --as-of 7d
              cachelog state --as-of 7d --payload
              cachelog state --key films --payload --format json | jq .entries[0].payload
            """))

    @ParentCommand var parent: CacheLogCommand

    @Option(help: ArgumentHelp("Only this key.", valueName: "name"))
    var key: String?

    @Option(name: .customLong("as-of"), parsing: .unconditional, help: ArgumentHelp(
        "A seq, a date (a bare day is its 00:00 UTC) or a duration before --now (7d or -7d: a week ago).",
        discussion: "Takes \(PositionArgument.forms).", valueName: "seq|date|duration"), transform: PositionArgument.parse)
    var asOf: PositionArgument?

    @Flag(help: "Also show what each entry's cache held: its payload (JSON as stored, else base64).")
    var payload = false

    @Option(name: .customLong("format"), help: OutputFormat.help)
    var formatOption: OutputFormat?

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
            // Each entry's payload is its put record's, as of any point: the put at its seq.
            var payloads: [UInt64: Data?]?
            if payload {
                var read: [UInt64: Data?] = [:]
                for entry in state.entries {
                    let put = try? log.events(EventQuery(from: .seq(entry.seq), to: .seq(entry.seq), includePayload: true)).first
                    if case .event(let event)? = put, event.kind == .put { read[entry.seq] = event.payload } else { read[entry.seq] = .some(nil) }
                }
                payloads = read
            }
            let out = StandardOutput()
            try out.show(StateReport(state, now: now, payloads: payloads), as: format) {
                out.line("as of seq \(state.seq): \(counted(state.entries.count, "live entry", plural: "live entries"))")
                guard !state.entries.isEmpty else { return }
                let keyWidth = EventPrinter.keyColumnWidth(state.entries.lazy.map(\.key))
                out.line(Terminal.color(EventPrinter.pad("KEY", keyWidth) + "  CACHED AT             AGE       MAX AGE  FRESH     SEQ     BYTES", "1"))
                for entry in state.entries {
                    let maxAge = RecordedPolicy(of: entry).maxAge
                    let fresh = CachePolicy(maxAge: maxAge).validate(entry.timestamp, against: now) ? "yes" : "no"
                    out.line("\(EventPrinter.keyCell(entry.key, keyWidth))  \(EventPrinter.pad(DateParsing.string(entry.timestamp), 20))  \(EventPrinter.pad(DurationText.string(now.timeIntervalSince(entry.timestamp)), 8))  \(EventPrinter.pad(maxAge.description, 7))  \(EventPrinter.pad(fresh, 5))  \(EventPrinter.pad(String(entry.seq), 6, right: true))  \(EventPrinter.pad(String(entry.bytes), 8, right: true))")
                    if let payloads {
                        out.line("    payload: " + ((payloads[entry.seq] ?? nil).map { Self.short(JSONText.payload($0)) } ?? "(cannot be read back)"))
                    }
                }
            }
        }
    }

    /// At most 100 characters of `text`, on one line.
    static func short(_ text: String) -> String {
        let line = String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
        return line.count <= 100 ? line : String(line.prefix(99)) + "…"
    }
}
