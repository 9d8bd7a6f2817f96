import CacheLog
import FeedCacheLog
import Foundation

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
