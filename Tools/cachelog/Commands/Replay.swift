import ArgumentParser
import CacheLog
import FeedCacheLog
import Foundation

struct Replay: AsyncParsableCommand, DatabaseCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the history: one event per line.",
        discussion: """
            Every put, delete and expire in the order they were appended. JSON lines carry seq, at \
            (when recorded), type, key, and per type: timestamp, bytes/storedBytes, and the policy \
            it was saved under, maxAge in seconds and contract (put; null when the put recorded \
            none), reason (delete), timestamp and maxAge in seconds (expire); --payload adds the payload (when it \
            is JSON, its bytes exactly as stored, numbers and escapes as written, without the \
            whitespace between tokens; else base64). A record that fails its checks is printed as \
            type "corrupt" and the replay goes on. A stored date or max age that is not a finite \
            number (a damaged or hand-made record) is shown as nan, inf or -inf, and as null in \
            JSON; a date outside the years 0000-9999 as @ and its seconds since 1970.

            Examples:
              cachelog replay
              cachelog replay --key films --type expire --format jsonl | jq .timestamp
              cachelog replay --from 2026-12-01 --to 2026-12-08 --reverse --limit 20
              cachelog replay --follow --format jsonl
            """)

    @ParentCommand var parent: CacheLogCommand

    @Option(help: ArgumentHelp("Only events about this key.", valueName: "name"))
    var key: String?

    @Option(name: .customLong("type"), help: ArgumentHelp("Only this type (put, delete, expire); repeat for several.", valueName: "type"))
    var types: [EventKindArgument] = []

    @Option(help: ArgumentHelp("First event: a seq or a date (recorded at or after).", valueName: "seq|date"))
    var from: PositionArgument?

    @Option(help: ArgumentHelp("Last event: a seq or a date (recorded at or before).", valueName: "seq|date"))
    var to: PositionArgument?

    @Option(help: ArgumentHelp("At most this many events.", valueName: "n"))
    var limit: Int?

    @Flag(help: "Newest first.")
    var reverse = false

    @Flag(help: "Keep printing events as they are appended (by any process) until interrupted.")
    var follow = false

    @Flag(help: "Include each put's payload.")
    var payload = false

    @Option(help: "Output format.")
    var format: TextOrJSONLines = .text

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        if follow && reverse { throw ValidationError("--follow reads forward; drop --reverse") }
    }

    func run() async throws {
        try await Self.reportingFailures {
            let log = try global.openForReading()
            let query = EventQuery(
                from: from?.position, to: follow ? nil : to?.position, key: key,
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

struct EventKindArgument: ExpressibleByArgument {
    let kind: EventKind

    init?(argument: String) {
        guard let kind = EventKind(name: argument) else { return nil }
        self.kind = kind
    }

    static var allValueStrings: [String] { EventKind.allCases.map(\.name) }
}

/// Renders events as a table a person can scan, or as JSON lines for jq.
struct EventPrinter {
    let format: TextOrJSONLines
    let output: StandardOutput
    /// JSON lines written by hand (``writeJSON(_:to:)``), for speed; else through ``ReplayLine``.
    var byHand = true

    func header() {
        guard format == .text else { return }
        output.line(Terminal.color("   SEQ  RECORDED AT           TYPE     KEY                   DETAIL", "1"))
    }

    func print(_ item: LogItem) throws {
        switch (format, item) {
        case (.jsonl, .event(let event)) where byHand: Self.writeJSON(event, to: output)
        case (.jsonl, _): try output.json(ReplayLine(item: item))
        case (.text, .event(let event)): output.line(Self.text(event))
        case (.text, .corrupt(let seq, let detail)):
            output.line("\(Self.pad(String(seq), 6, right: true))  \(Self.pad("?", 20))  \(Terminal.color(Self.pad("CORRUPT", 7), "31"))  \(detail)")
        }
    }

    /// ``ReplayLine``'s JSON, written as bytes straight into the output buffer: a replay of a
    /// million events spent most of its time building intermediate Strings.
    static func writeJSON(_ event: RecordedEvent, to out: StandardOutput) {
        out.append("{\"seq\":")
        out.append(event.seq)
        out.append(",\"at\":")
        out.appendJSONDate(event.recordedAt)
        out.append(",\"type\":\"")
        switch event.kind {
        case .put: out.append("put\"")
        case .delete: out.append("delete\"")
        case .expire: out.append("expire\"")
        }
        out.append(",\"key\":")
        out.appendJSONString(event.key)
        if let timestamp = event.timestamp {
            out.append(",\"timestamp\":")
            out.appendJSONDate(timestamp)
        }
        switch event.kind {
        case .put:
            out.append(",\"bytes\":")
            out.append(event.payloadBytes)
            out.append(",\"maxAge\":")
            if let maxAge = event.maxAge { out.appendJSONNumber(maxAge) } else { out.append("null") }
            out.append(",\"contract\":")
            if let contract = event.metadata[CacheLogFeedStore.contractName] { out.appendJSONString(contract) } else { out.append("null") }
        case .delete:
            out.append(",\"reason\":")
            out.appendJSONString(event.reason?.name ?? "unknown")
        case .expire:
            out.append(",\"maxAge\":")
            out.appendJSONNumber(event.maxAge ?? 0)
        }
        out.append(",\"storedBytes\":")
        out.append(event.storedBytes)
        if let payload = event.payload {
            out.append(",\"payload\":")
            out.write(JSONText.payload(payload))
        }
        out.append("}")
        out.endLine()
    }

    static func text(_ event: RecordedEvent) -> String {
        let detail: String
        switch event.kind {
        case .put:
            let policy = event.maxAge.map { ", max age \(DurationText.string($0))" } ?? ""
            let contract = event.metadata[CacheLogFeedStore.contractName].map { ", \($0)" } ?? ""
            detail = "cached \(event.timestamp.map(DateParsing.string) ?? "?"), \(event.payloadBytes) bytes (\(event.storedBytes) stored)\(policy)\(contract)"
        case .delete:
            detail = "reason: \(event.reason?.name ?? "unknown")"
        case .expire:
            detail = "cached \(event.timestamp.map(DateParsing.string) ?? "?") was \(DurationText.string(event.maxAge ?? 0)) old or more"
        }
        let colors = [EventKind.put: "32", .delete: "33", .expire: "35"]
        var line = "\(pad(String(event.seq), 6, right: true))  \(pad(DateParsing.string(event.recordedAt), 20))  \(Terminal.color(pad(event.kind.name, 7), colors[event.kind] ?? "0"))  \(pad(event.key, 20))  \(detail)"
        if let payload = event.payload { line += "\n        payload: " + JSONText.payload(payload) }
        return line
    }

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let count = text.count
        guard count < width else { return text }
        let space = String(repeating: " ", count: width - count)
        return right ? space + text : text + space
    }
}
