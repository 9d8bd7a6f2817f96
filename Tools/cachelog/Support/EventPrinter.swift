import FeedCache
import CacheLog
import CacheLogReports
import FeedCacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
        case .retention: out.append("retention\"")
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
            out.append(",\"origin\":")
            out.appendJSONString(PutOrigin(metadata: event.metadata).rawValue)
        case .delete:
            out.append(",\"reason\":")
            out.appendJSONString(event.reason?.name ?? "unknown")
        case .expire:
            out.append(",\"maxAge\":")
            out.appendJSONNumber(event.maxAge ?? 0)
        case .retention:
            let retention = event.retention
            out.append(",\"history\":")
            if let history = retention?.policy.history { out.appendJSONNumber(history) } else { out.append("null") }
            out.append(",\"sizeLimit\":")
            if let limit = retention?.policy.sizeLimit { out.append(limit) } else { out.append("null") }
            out.append(",\"overrides\":[")
            for (index, override) in (retention?.policy.overrides ?? []).enumerated() {
                if index > 0 { out.append(",") }
                switch override.match {
                case .keyPrefix(let prefix):
                    out.append("{\"prefix\":")
                    out.appendJSONString(prefix)
                case .contract(let contract):
                    out.append("{\"contract\":")
                    out.appendJSONString(contract)
                }
                out.append(",\"history\":")
                out.appendJSONNumber(override.history)
                out.append("}")
            }
            out.append("],\"by\":")
            out.appendJSONString(retention?.by ?? "")
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
            let written = PutOrigin(metadata: event.metadata) == .written ? ", written by the app" : ""
            detail = "cached \(event.timestamp.map(DateParsing.string) ?? "?"), \(event.payloadBytes) bytes (\(event.storedBytes) stored)\(policy)\(contract)\(written)"
        case .delete where event.reason == .evicted:
            detail = "reason: evicted (the database passed its size limit)"
        case .delete:
            detail = "reason: \(event.reason?.name ?? "unknown")"
        case .expire:
            detail = "cached \(event.timestamp.map(DateParsing.string) ?? "?") was \(DurationText.string(event.maxAge ?? 0)) old or more"
        case .retention:
            detail = event.retention.map { RetentionText.summary($0.policy, by: $0.by) } ?? "a retention policy that does not parse"
        }
        let colors = [EventKind.put: "32", .delete: "33", .expire: "35", .retention: "36"]
        // A retention is about no key: its longer name takes two columns of the empty key cell.
        let (typeWidth, keyWidth) = event.kind == .retention ? (9, 18) : (7, 20)
        var line = "\(pad(String(event.seq), 6, right: true))  \(pad(DateParsing.column(event.recordedAt), 20))  \(Terminal.color(pad(event.kind.name, typeWidth), colors[event.kind] ?? "0"))  \(keyCell(event.key, keyWidth))  \(detail)"
        if let payload = event.payload { line += "\n        payload: " + JSONText.payload(payload) }
        return line
    }

    /// A key as a table cell: escaped (``escaped(_:)``) so that a row stays one line, cut to
    /// `width` columns with an ellipsis so that the columns after it stay aligned, and padded to
    /// `width` by display width. `--format json` has the whole key as it is.
    static func keyCell(_ key: String, _ width: Int) -> String { pad(truncated(escaped(key), to: width), width) }

    /// The width of a key column that holds `keys`: as wide as the widest key, between 20 and 40
    /// columns, so that short keys make a compact table and a long one cannot push the rest of
    /// the row off a terminal.
    static func keyColumnWidth(_ keys: some Sequence<String>) -> Int {
        min(40, keys.reduce(20) { max($0, displayWidth(escaped($1))) })
    }

    /// `text` in at most `width` display columns: whole if it fits, else its start, "…" and its
    /// end. Keys often differ only at the end (`object:URL/people/1.json`, `…/11.json`), so the
    /// cut is in the middle, where keys that share a prefix repeat themselves.
    static func truncated(_ text: String, to width: Int) -> String {
        guard displayWidth(text) > width else { return text }
        // One column is the ellipsis; the start gets the extra column of an odd split.
        let tailBudget = (width - 1) / 2
        let headBudget = width - 1 - tailBudget
        func fitting(_ characters: some Sequence<Character>, _ budget: Int) -> [Character] {
            var kept: [Character] = []
            var used = 0
            for character in characters {
                let columns = displayWidth(String(character))
                guard used + columns <= budget else { break }
                kept.append(character)
                used += columns
            }
            return kept
        }
        return String(fitting(text, headBudget)) + "…" + String(fitting(text.reversed(), tailBudget).reversed())
    }

    /// `text` as a table row shows it: escaped as ``KeyText`` escapes keys (`\n`, `\u{1b}`, `\\`).
    static func escaped(_ text: String) -> String { KeyText.escaped(text) }

    /// The columns `text` takes on a terminal: 2 for wide characters (CJK, emoji), 0 for
    /// combining marks and zero-width joiners within a character, 1 otherwise.
    static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { sum, character in
            let scalars = character.unicodeScalars
            guard let first = scalars.first else { return sum }
            let wide = scalars.contains { $0.properties.isEmojiPresentation } || (character.unicodeScalars.contains("\u{FE0F}") && first.properties.isEmoji)
                || isWide(first.value)
            return sum + (wide ? 2 : 1)
        }
    }

    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
             0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let count = displayWidth(text)
        guard count < width else { return text }
        let space = String(repeating: " ", count: width - count)
        return right ? space + text : text + space
    }
}
