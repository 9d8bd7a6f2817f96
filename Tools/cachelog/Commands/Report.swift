import ArgumentParser
import CacheLog
import CacheLogReports
import FeedCacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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

            The page stays small however long the log: it is divided into \(HistoryReport.defaultColumns) \
            columns, and a key with more events in the window than columns gets a count per \
            column instead of a mark per event (the tooltip gives the counts and the column's \
            times); a key with more than \(2 * HistoryReport.defaultColumns) bands gets, per column, the state \
            that covered most of it. The table's numbers are always exact. Measured on a \
            1,000,000-event log over 1,000 keys and 90 days (made by 'cachelog-writer DB \
            1000000 --history'): a 2.4 MB page (0.5 MB gzipped), written in about 4 s by a \
            release build; chromium draws it in about 5 s.

            The page goes to --out FILE, or to stdout when --out is - or absent and stdout is not \
            a terminal. As with curl -o, the kernel opens --out (its link protections and file \
            ownership apply; a file keeps its owner and mode); a regular file of your own is \
            replaced whole, a new one is created 0600, and a link, a FIFO, a device or a \
            descriptor (/dev/stdout, >(gzip > x)) is written through. Another user's link in a \
            shared directory (/tmp) is never followed. It is HTML only: --format json is refused; 'cachelog audit --format json' has the same \
            timeline as data.

            Examples:
              cachelog report --out history.html
              cachelog report --key-prefix search: --from 30d --out searches.html
              cachelog report --key films --key genres --from 2026-12-01 --to 2026-12-09 > week.html
            """))

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
    var formatOption: FormatOption<TextOnly>?

    private var toStdout: Bool { out == nil || out == "-" }

    func validate() throws {
        if chosenFormat != .text {
            throw ValidationError("report writes an HTML page, not \(chosenFormat.rawValue); drop --format, or use 'cachelog audit --format json' for the timeline as JSON")
        }
        if let out, out != "-" { try OutFile.check(out, notIn: global.databasePath()) }
        if toStdout, Terminal.stdoutIsTerminal {
            throw ValidationError("refusing to write an HTML page to a terminal; add --out report.html, or a pipe")
        }
    }

    func run() async throws {
        try await reading { log in
            let now = try global.clock()()
            let keys: [String]
            let window: DateInterval
            do {
                keys = try HistoryReport.keys(in: log, named: key, prefix: keyPrefix)
                window = try HistoryReport.window(
                    of: keys, in: log, from: from?.position(now: now), to: to?.position(now: now, inclusiveDay: true), now: now)
            } catch let error as HistoryReport.SelectionError {
                switch error {
                case .unknownKey: throw CLIFailure("\(error); 'cachelog stats' lists every key")
                case .emptyWindow: throw CLIFailure("\(error); give --from before --to (or --now)", code: Exit.usage)
                case .noEvent: throw CLIFailure("\(error)")
                }
            }
            var report = try HistoryReport(log: log, keys: keys, window: window, maxAge: maxAge?.value, generatedAt: now) { done, all in
                if done % 100 == 0 { Terminal.progress("reported \(done) of \(all) keys…") }
            }
            Terminal.endProgress()
            report.selection = selection
            report.judgedBy = maxAge.map { "--max-age \($0.value)" } ?? report.judgedBy
            let page = Data(report.html().utf8)
            if let out, out != "-" {
                try OutFile.write(page, to: out)
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
}
