import ArgumentParser
import CacheLog
import Foundation

struct Report: AsyncParsableCommand, DatabaseCommand, FormattedCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Draw the history as one HTML page: each key's fresh, stale and missing time.",
        discussion: HelpLayout.keepingIndentation("""
            One self-contained HTML file (CSS, SVG drawing and data inline; no network; opens \
            from file://). Per key, a timeline of bands (fresh, stale, missing, no cache yet) \
            judged as 'cachelog audit' judges them, with a mark for each put, delete and expire \
            (hover for its seq and what the audit says of it); a dated axis (UTC); a summary \
            table (events in the window by type, last refresh, time fresh, stale and missing in \
            the window); and a slider that shows which keys were fresh, stale or missing at any \
            moment. report.html#at=2026-12-05T00:00:00Z opens at that moment.

            The window is --from to --to (default: the first event of the selected keys to \
            --now); each key's whole history before it still decides its state at the start.

            The page stays small however long the log: it is divided into \(Self.columns) \
            columns, and a key with more events in the window than columns gets a count per \
            column instead of a mark per event (the tooltip gives the counts and the column's \
            times); a key with more than \(2 * Self.columns) bands gets, per column, the state \
            that covered most of it. The table's numbers are always exact. Measured on a \
            1,000,000-event log over 1,000 keys and 90 days (made by 'cachelog-writer DB \
            1000000 --history'): a 2.4 MB page (0.5 MB gzipped), written in about 4 s by a \
            release build; chromium draws it in about 5 s.

            The page goes to --out FILE (written to a temporary file beside it, then renamed \
            over it), or to stdout when --out is - or absent and stdout is not a terminal. It \
            is HTML only: --format json is refused; 'cachelog audit --format json' has the same \
            timeline as data.

            Examples:
              cachelog report --out history.html
              cachelog report --key-prefix search: --from 30d --out searches.html
              cachelog report --key films --key genres --from 2026-12-01 --to 2026-12-09 > week.html
            """))

    /// Columns the window is divided into for aggregated marks and sampled bands: about a pixel
    /// column of the page's timeline at 1280 px wide, where a finer division could not be seen.
    static let columns = 240

    @ParentCommand var parent: CacheLogCommand

    @Option(help: ArgumentHelp("Only this key; repeat for several.", valueName: "name"))
    var key: [String] = []

    @Option(name: .customLong("key-prefix"), help: ArgumentHelp(
        "Only keys starting with this (as bytes: search: selects every search), with any --key.", valueName: "prefix"))
    var keyPrefix: String?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "The window's start: a seq, a date or a duration before --now. (default: the first event of the selected keys)",
        discussion: "Takes \(PositionArgument.forms).", valueName: "seq|date|duration"), transform: PositionArgument.parse)
    var from: PositionArgument?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "The window's end: a seq, a date or a duration before --now; a bare day includes that whole day. (default: --now)",
        discussion: "Takes \(PositionArgument.forms).", valueName: "seq|date|duration"), transform: PositionArgument.parse)
    var to: PositionArgument?

    @Option(name: .customLong("max-age"), parsing: .unconditional, help: MaxAgeArgument.judgingHelp, transform: MaxAgeArgument.parse)
    var maxAge: MaxAgeArgument?

    @Option(help: ArgumentHelp("Write the page to this file; - for stdout.", valueName: "file"))
    var out: String?

    @Option(name: .customLong("format"), help: ArgumentHelp("Only text (the default): the report is an HTML page.", valueName: "format"))
    var formatOption: OutputFormat?

    private var toStdout: Bool { out == nil || out == "-" }

    func validate() throws {
        if chosenFormat != .text {
            throw ValidationError("report writes an HTML page, not \(chosenFormat.rawValue); drop --format, or use 'cachelog audit --format json' for the timeline as JSON")
        }
        if let out, out != "-" {
            var isDirectory: ObjCBool = false
            guard !out.isEmpty, !(FileManager.default.fileExists(atPath: out, isDirectory: &isDirectory) && isDirectory.boolValue) else {
                throw ValidationError("--out must name a file, not '\(out)'")
            }
        }
        if toStdout, Terminal.stdoutIsTerminal {
            throw ValidationError("refusing to write an HTML page to a terminal; add --out report.html, or a pipe")
        }
    }

    func run() async throws {
        try await reading { log in
            let now = try global.clock()()
            let keys = try selectedKeys(log)
            let window = try resolveWindow(log, keys: keys, now: now)
            let aggregator = HistoryAggregator(window: window, columns: Self.columns, timeline: AuditTimeline(maxAge: maxAge?.value))
            var reported: [HistoryReport.Key] = []
            reported.reserveCapacity(keys.count)
            for (index, key) in keys.enumerated() {
                // One key's history at a time, through the key index: memory holds one key's
                // events, not the log's.
                var events: [RecordedEvent] = []
                var corrupt = 0
                try log.forEachEvent(EventQuery(to: .date(window.end), key: key)) { item in
                    switch item {
                    case .event(let event): events.append(event)
                    case .corrupt: corrupt += 1
                    }
                    return true
                }
                reported.append(aggregator.key(key, events: events, corrupt: corrupt))
                if index % 100 == 99 { Terminal.progress("reported \(index + 1) of \(keys.count) keys…") }
            }
            Terminal.endProgress()
            let report = HistoryReport(
                from: window.start, to: window.end, start: window.start.timeIntervalSince1970, span: window.duration,
                columns: Self.columns, selection: selection, judgedBy: maxAge.map { "--max-age \($0.value)" } ?? "each version's recorded max age",
                generatedAt: now, keys: reported)
            let page = Data(try ReportPage.html(report).utf8)
            if let out, out != "-" {
                try WholeFile.write(page, to: out)
            } else {
                let stdout = StandardOutput()
                stdout.append(page)
                stdout.flush()
            }
        }
    }

    private var selection: String {
        var parts = key.map { "--key \(EventPrinter.escaped($0))" }
        if let keyPrefix { parts.append("--key-prefix \(EventPrinter.escaped(keyPrefix))") }
        return parts.isEmpty ? "all keys" : parts.joined(separator: " ")
    }

    /// The keys to draw, in byte order, as the log keys them (NFC and NFD spellings are two keys).
    private func selectedKeys(_ log: EventLog) throws -> [String] {
        for name in key where try log.events(EventQuery(key: name, limit: 1)).isEmpty {
            throw CLIFailure("no key '\(EventPrinter.escaped(name))' in the log; 'cachelog stats' lists every key")
        }
        if key.isEmpty && keyPrefix == nil { return try log.keys() }
        let prefixed = try keyPrefix.map { try log.keys(withPrefix: $0) } ?? []
        var seen = Set<[UInt8]>()
        return (key + prefixed).map { Array($0.utf8) }.filter { seen.insert($0).inserted }
            .sorted { $0.lexicographicallyPrecedes($1) }.map { String(decoding: $0, as: UTF8.self) }
    }

    private func resolveWindow(_ log: EventLog, keys: [String], now: Date) throws -> DateInterval {
        let start = try from.map { try date(of: $0.position(now: now), in: log, last: false) }
            ?? keys.compactMap { try? firstRecorded(log, key: $0) }.min() ?? now
        let end = try to.map { try date(of: $0.position(now: now, inclusiveDay: true), in: log, last: true) } ?? now
        guard start.timeIntervalSince1970.isFinite, end.timeIntervalSince1970.isFinite, start <= end else {
            throw CLIFailure("the window is empty: it starts at \(DateParsing.string(start)) and ends at \(DateParsing.string(end)); give --from before --to (or --now)", code: Exit.usage)
        }
        return DateInterval(start: start, end: end)
    }

    /// A position as a date: a seq is the recorded time of the first event at or after it (for
    /// --from) or the last at or before it (for --to).
    private func date(of position: LogPosition, in log: EventLog, last: Bool) throws -> Date {
        let seq: UInt64
        switch position {
        case .date(let date): return date
        case .seq(let value): seq = value
        }
        let query = last ? EventQuery(to: .seq(seq), reverse: true, limit: 1) : EventQuery(from: .seq(seq), limit: 1)
        for item in try log.events(query) {
            if case .event(let event) = item { return event.recordedAt }
        }
        throw CLIFailure("no event \(last ? "at or before" : "at or after") seq \(seq) to place the window's \(last ? "end" : "start") at")
    }

    private func firstRecorded(_ log: EventLog, key: String) throws -> Date? {
        var first: Date?
        try log.forEachEvent(EventQuery(key: key)) { item in
            guard case .event(let event) = item else { return true }
            first = event.recordedAt
            return false
        }
        return first
    }
}
