import ArgumentParser
import CacheLog
import FeedCache
import FeedCacheLog
import Foundation

struct Validate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the validate-cache use case over one key or every key (a cron job).",
        discussion: """
            A cache at least --max-age old is expired (an expire event removes it); a cache that \
            cannot be read back is deleted with reason retrieval-error; a fresh cache is left alone.

            Examples:
              cachelog validate
              cachelog validate --key films --max-age 7d
              cachelog --now 2026-12-09T10:00:00Z validate --format json | jq '.[] | select(.outcome == "expired")'
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Only this key.", valueName: "name"))
    var key: String?

    @Option(name: .customLong("max-age"), help: ArgumentHelp("The cache policy: 90s, 15m, 12h or 7d.", valueName: "duration"))
    var maxAge = MaxAgeArgument(.days(7))

    @Option(help: "Output format.")
    var format: TextOrJSON = .text

    func run() async throws {
        try await Self.reportingFailures {
            let log = try global.openForWriting()
            let clock = try global.clock()
            let keys = try key.map { [$0] } ?? log.state().entries.map(\.key)
            var lines: [String] = []
            var objects: [String] = []
            for key in keys {
                let before = try log.entry(key)
                let loader = LocalFeedLoader<JSONValue>(
                    store: CacheLogFeedStore(log: log, key: key), currentDate: clock,
                    policy: CachePolicy(maxAge: maxAge.value), logger: global.logger())
                try await loader.validateCache()
                let outcome: String
                var detail = ""
                if let before, try log.entry(key) == nil {
                    let last = try log.events(EventQuery(key: key, reverse: true, limit: 1)).first
                    if case .event(let event) = last, event.kind == .delete {
                        outcome = "deleted"
                        detail = "unreadable, deleted at seq \(event.seq)"
                    } else {
                        outcome = "expired"
                        detail = "cached \(DateParsing.string(before.timestamp)), \(DurationText.string(clock().timeIntervalSince(before.timestamp))) old; expired at seq \(last?.seq ?? 0)"
                    }
                } else if let before {
                    outcome = "fresh"
                    detail = "cached \(DateParsing.string(before.timestamp)), \(DurationText.string(clock().timeIntervalSince(before.timestamp))) old"
                } else {
                    outcome = "empty"
                    detail = "no cache"
                }
                lines.append("\(key): \(outcome) (\(detail))")
                objects.append("{\"key\":\(JSONText.string(key)),\"outcome\":\"\(outcome)\",\"detail\":\(JSONText.string(detail))}")
            }
            let out = StandardOutput()
            switch format {
            case .json: out.line("[\(objects.joined(separator: ","))]")
            case .text:
                if lines.isEmpty { out.line("no live cache entries") }
                lines.forEach(out.line)
            }
        }
    }
}
