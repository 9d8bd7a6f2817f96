import ArgumentParser
import CacheLogKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct Searches: AsyncParsableCommand, DatabaseCommand, FormattedCommand {
    static let configuration = CommandConfiguration(
        commandName: "searches",
        abstract: "Past searches, the last saved first: the search history, from the log.",
        discussion: HelpLayout.keepingIndentation("""
            One line per query ever searched (keys search:CONTRACT:TEXT): when its results were \
            last cached, how many items they hold, and whether they are still in the cache and \
            fresh under the policy they were saved under (at --now). The people and verse search \
            apps' "search history" and "show the last search on launch": the first line is the \
            last search.

            --format json prints [{"query", "contract", "key", "timestamp", "items", "fresh", \
            "more"}] ("more": the server has another page, for load --more).

            Examples:
              cachelog searches
              cachelog searches --contract people --limit 1 --format json | jq -r '.[0].query'
            """))

    @ParentCommand var parent: CacheLogCommand

    @Option(help: ArgumentHelp("Only searches of this contract (verses or people).", valueName: "contract"))
    var contract: Contract?

    @Option(parsing: .unconditional, help: ArgumentHelp("At most this many searches.", valueName: "n"))
    var limit: Int?

    @Option(name: .customLong("format"), help: DocumentFormat.help)
    var formatOption: DocumentFormat?

    func validate() throws {
        try checkDocumentFormat()
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        if let contract, !contract.isSearch { throw ValidationError("--contract: the searches are verses and people") }
    }

    func run() async throws {
        try await Self.reportingFailures {
            let client = try global.client(readOnly: true)
            guard try client.existingLog() != nil else { throw CacheLogError.noDatabase(path: global.databasePath()) }
            let searches = try client.searches(contract: contract?.rawValue, limit: limit)
            let out = StandardOutput()
            try out.show(searches, as: format) {
                if searches.isEmpty { out.line("no searches") }
                for search in searches {
                    let when = EventPrinter.pad(search.timestamp.map(DateParsing.column) ?? "?", 20)
                    let state = search.fresh ? "fresh" : "stale or gone"
                    out.line("\(when)  \(EventPrinter.pad(EventPrinter.escaped(search.contract), 7))  \(EventPrinter.pad(String(search.items), 4, right: true)) item\(search.items == 1 ? " " : "s")  \(EventPrinter.pad(state, 13))  \(search.query.isEmpty ? "(empty query)" : EventPrinter.escaped(search.query))")
                }
            }
            out.flush()
        }
    }
}
