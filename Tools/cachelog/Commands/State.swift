import ArgumentParser
import CacheLog
import FeedCache
import CacheLogReports
import FeedCacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct State: AsyncParsableCommand, DatabaseCommand, DocumentCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Show the live cache entries, now or at a point in the past.",
        discussion: HelpLayout.keepingIndentation("""
            The state of the cache (the projection of the log): for each key, its live put (seq, cache timestamp, payload \
            size) and the policy it was saved under: its max age (7d for a put saved before puts \
            recorded a policy), when it expires and whether it is fresh at --now (or at the date \
            given to --as-of: an age counts from the cache's timestamp, or from when its save was \
            recorded if that is earlier, and a cache stamped later than that moment is not fresh), and its contract. JSON entries carry key, timestamp, seq, bytes, \
            maxAge (seconds), expires, fresh and contract (null when none), and with --payload, payload: what the cache held (its JSON as stored, else base64). --as-of rebuilds it as it was right after a seq (one past the end of the log is an \
            error, exit 1), or after the last event recorded by a date. With --key, only that key's own records are read (through the key index), \
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

    @Option(name: .customLong("format"), help: DocumentFormat.help)
    var formatOption: DocumentFormat?

    func run() async throws {
        let clockNow = try global.clock()()
        let position = asOf?.position(now: clockNow)
        try await reading { log in
            // As git refuses an unknown revision: a seq not written yet has no state to show (a
            // date later than the last event is fine: the state then is the last one).
            if case .seq(let asked)? = position, case let last = try log.lastSeq(), asked > last {
                throw CLIFailure(last == 0 ? "no seq \(asked): the log is empty" : "no seq \(asked): the log ends at seq \(last)")
            }
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
            let payloads = payload ? Dictionary(state.entries.map { ($0.seq, Self.payload(at: $0.seq, in: log)) }) { first, _ in first } : nil
            let out = StandardOutput()
            try out.show(StateReport(state, now: now, payloads: payloads), as: format) {
                out.line("as of seq \(state.seq): \(counted(state.entries.count, "live entry", plural: "live entries"))")
                if !state.trimmed.isEmpty {
                    out.line("not known then: \(state.trimmed.map(EventPrinter.escaped).joined(separator: ", ")) (retention trimmed their history past seq \(state.seq))")
                }
                guard !state.entries.isEmpty else { return }
                let keyWidth = EventPrinter.keyColumnWidth(state.entries.lazy.map(\.key))
                out.line(Terminal.color(EventPrinter.pad("KEY", keyWidth) + "  CACHED AT             AGE       MAX AGE  FRESH     SEQ     BYTES", "1"))
                for entry in state.entries {
                    let judged = EntryFreshness(entry, at: now)
                    let fresh = judged.isFresh ? "yes" : "no"
                    out.line("\(EventPrinter.keyCell(entry.key, keyWidth))  \(EventPrinter.pad(DateParsing.column(entry.timestamp), 20))  \(EventPrinter.pad(DurationText.string(now.timeIntervalSince(entry.timestamp)), 8))  \(EventPrinter.pad(judged.maxAge.description, 7))  \(EventPrinter.pad(fresh, 5))  \(EventPrinter.pad(String(entry.seq), 6, right: true))  \(EventPrinter.pad(String(entry.bytes), 8, right: true))")
                    switch payloads?[entry.seq] {
                    case .bytes(let bytes)?: out.line("    payload: " + Self.short(JSONText.payload(bytes)))
                    case .unreadable(let why)?: out.line("    payload: unreadable (\(why))")
                    case nil: break
                    }
                }
            }
            // As load does, a payload that cannot be read is a failure, said once on stderr.
            let unreadable = state.entries.compactMap { entry in
                if case .unreadable(let why)? = payloads?[entry.seq] { "\(EventPrinter.escaped(entry.key)) (\(why))" } else { nil }
            }
            guard unreadable.isEmpty else {
                out.flush()
                throw CLIFailure("cache unreadable: \(unreadable.joined(separator: ", ")); 'cachelog verify' names the damage")
            }
        }
    }

    /// The payload of the put at `seq`, or why it cannot be read back.
    private static func payload(at seq: UInt64, in log: EventLog) -> StoredPayload {
        do {
            switch try log.events(EventQuery(from: .seq(seq), to: .seq(seq), includePayload: true)).first {
            case .event(let event)? where event.kind == .put:
                return event.payload.map(StoredPayload.bytes) ?? .unreadable("the put at seq \(seq) has no payload")
            case .corrupt(_, let detail)?: return .unreadable("corrupt record at seq \(seq): \(detail)")
            case .event?, nil: return .unreadable("no put at seq \(seq)")
            }
        } catch {
            return .unreadable("\(error)")
        }
    }

    /// At most 100 characters of `text`, on one line.
    static func short(_ text: String) -> String {
        let line = String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
        return line.count <= 100 ? line : String(line.prefix(99)) + "…"
    }
}
