import ArgumentParser
import CacheLog
import FeedCache
import FeedCacheLog
import Foundation

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
        try await reading { log in
            let now = try global.clock()()
            let prefix = "search:" + (contract.map { $0.rawValue + ":" } ?? "")
            // The last put of each search key, in log order; keyed by bytes, as the log keys.
            var last: [[UInt8]: RecordedEvent] = [:]
            try log.forEachEvent(EventQuery(kinds: [.put], includePayload: true)) { item in
                if case .event(let event) = item, event.key.hasPrefix(prefix) { last[Array(event.key.utf8)] = event }
                return true
            }
            let live = Dictionary(try log.state().entries.map { (Array($0.key.utf8), $0.seq) }, uniquingKeysWith: { first, _ in first })
            var searches = last.values.map { put -> PastSearch in
                let parts = put.key.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
                let policy = RecordedPolicy(of: put) ?? RecordedPolicy.unrecorded
                let fresh = live[Array(put.key.utf8)] == put.seq
                    && put.timestamp.map { CachePolicy(maxAge: policy.maxAge).validate($0, against: now) } == true
                return PastSearch(
                    query: put.metadata[SearchRequest.queryName] ?? (parts.count == 3 ? String(parts[2]) : put.key),
                    contract: put.metadata[CacheLogFeedStore.contractName] ?? (parts.count == 3 ? String(parts[1]) : ""),
                    key: put.key, timestamp: put.timestamp,
                    items: put.payload.map(Self.itemCount) ?? 0, fresh: fresh, more: put.metadata[SearchRequest.nextName] != nil, seq: put.seq)
            }
            searches.sort { $0.seq > $1.seq }
            if let limit { searches = Array(searches.prefix(limit)) }
            let out = StandardOutput()
            try out.show(searches, as: format) {
                if searches.isEmpty { out.line("no searches") }
                for search in searches {
                    let when = EventPrinter.pad(search.timestamp.map(DateParsing.column) ?? "?", 20)
                    let state = search.fresh ? "fresh" : "stale or gone"
                    out.line("\(when)  \(EventPrinter.pad(search.contract, 7))  \(EventPrinter.pad(String(search.items), 4, right: true)) item\(search.items == 1 ? " " : "s")  \(EventPrinter.pad(state, 13))  \(search.query.isEmpty ? "(empty query)" : search.query)")
                }
            }
        }
    }

    /// The items of a cached search: its payload is a JSON array (one item when it is not).
    private static func itemCount(_ payload: Data) -> Int {
        ((try? JSONSerialization.jsonObject(with: payload, options: [.fragmentsAllowed])) as? [Any])?.count ?? 1
    }
}
