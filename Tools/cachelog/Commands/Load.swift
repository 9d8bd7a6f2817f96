import ArgumentParser
import CacheLogKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct Load: AsyncParsableCommand, DatabaseCommand, FormattedCommand, NetworkCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Load a feed: remote first (or a fresh cache first), the other when it fails.",
        discussion: HelpLayout.keepingIndentation("""
            remote-first: on success the cache of KEY is replaced (delete + put, one atomic append, \
            recording the max age and contract it was saved under) and the items are printed. When \
            the remote fails (no connection, a status other than 200, a body that does not match the \
            contract, after the retries), the cached copy is printed if it is younger than --max-age; \
            otherwise one line on stderr and exit code 3.

            Without --max-age, a cache is judged by the max age it was saved under (as state and \
            validate judge it), and the contract's default is what a new save records. An age counts \
            from the cache's timestamp, or from when its save was recorded if that is earlier; a cache \
            stamped later than --now (saved by a clock that was ahead) is never fresh.

            cache-first: a cache younger than --max-age is printed with no request at all; an empty, \
            expired or unreadable cache goes to the remote (with its retries), whose items are \
            cached; when the remote fails too, the cache is read once more (another process may \
            have saved the key meanwhile), else one line on stderr and exit code 3. cache-only: \
            the cache alone, never a request; exit code 3 when it holds nothing fresh.

            Searches (verses, people): --query TEXT fills {query} in the URL (percent-encoded) \
            and {page} with 1; the key defaults to search:CONTRACT:TEXT; the empty query is a \
            search too. --more loads the next page (people: the page's next URL; verses: {page} + \
            1, until a page comes back empty) and caches the merged list under the same key; \
            it extends only a fresh cached search (an expired one: search again without --more); \
            offline, --more exits 3 and leaves the cache as it was. A people search also caches \
            each person under object:URL; load that URL with --contract person (cache first) and \
            no request is made while it is fresh.

            Each contract brings its app's defaults; --max-age, --strategy and --retries override them:
              contract app             age  strategy      retries
            \(Contract.defaultsTable)
            The people search spec names no max age: it gets 30d, as the verse search spec gives search.

            Revalidation: a save keeps the response's ETag and Last-Modified with the cache. The next \
            load of KEY (not a search) sends them back, verbatim, as If-None-Match and \
            If-Modified-Since; a 304 Not Modified saves the cached items again, timestamped now (one \
            put that refers to the stored bytes: no second copy), so an expired cache is fresh again, \
            and prints them as from remote (not modified). A server that ignores the validators sends \
            the feed, which is cached as usual. A 304 with nothing cached that can be read saves \
            nothing; the cache is then the fallback, as for any remote failure.

            HTTPS: the server's certificate must be trusted by the system's store, or, with \
            --cacert FILE, by the certificates in FILE alone (the system's store is then not \
            trusted; a FILE with no certificate in it is a usage error). A certificate that is \
            not trusted (or a TLS handshake that fails) says so, as remote certificate not \
            trusted: … or remote TLS handshake failed: …, and the cache serves as for any remote \
            failure. Redirects are followed, up to 20 (then remote sent too many redirects), over \
            http and https only, and never from https to plain http: such a redirect is refused \
            (remote redirect to URL refused: …) and the cache serves. A gzip or deflate body is \
            decoded; one that does not decode, or stops short (a gzip body without its trailer), \
            counts as invalid data, and so does a body over --max-body bytes (10 MiB unless \
            given), counted after decoding. Requests say User-Agent: cachelog/VERSION. libcurl \
            (Debian's libcurl4) is loaded only when a request is made; without it, a load that \
            the cache serves still says so in one line on stderr (warning: KEY came from the \
            cache: remote not asked: …), exit code 0.

            \(NetworkOptions.environmentHelp)

            When the remote items cannot be saved (a key longer than the database allows, a full \
            disk), they are still printed, but not as cached: one line on stderr says why, \
            --format json has "cached": false, and the exit code is 1. So it is when a newer cache \
            was saved during this load: a save never replaces a newer cache, and which is newer is \
            the log's order, not a clock: a load whose request began no later than that of the \
            cache saved meanwhile (by another process, whatever its --now) leaves that cache alone, \
            and the line names the save it kept and why; a removal made during the load stays too.

            --format json prints {"source", "key", "cached", "revalidated", "timestamp", "age", \
            "items"}: where the items came from (remote or cache), whether they are in the cache \
            now, whether the remote vouched for the cached items (304) rather than sending them, when they \
            were cached (or loaded, when not cached), their age in seconds, and the items as JSON. \
            With --contract json the items are the server's JSON exactly as sent (numbers and \
            escapes as written), without the whitespace between tokens; a top-level array's \
            elements are the items, any other document is the one item.

            Examples:
              cachelog load https://example.com/films.json --key films --contract films
              cachelog load https://example.com/genres.json --key genres --contract genres --strategy remote-first --format json | jq '.items[].name'
              cachelog --now 2026-12-09T10:00:00Z load https://example.com/films.json --key films --contract films
              cachelog load 'https://swapi.dev/api/people/?search={query}' --contract people --query sky
              cachelog load 'https://swapi.dev/api/people/?search={query}' --contract people --query sky --more
              cachelog load 'https://example.com/verses?q={query}&page={page}' --contract verses --query "love one another"
            """))

    @ParentCommand var parent: CacheLogCommand

    @Argument(help: ArgumentHelp("The feed's URL (http or https); a search's may hold {query} and {page}.", valueName: "url"))
    var url: String

    @Option(help: ArgumentHelp(
        "The cache key, e.g. films. (default with --query: search:CONTRACT:TEXT; with --contract person: object:URL)",
        valueName: "name"))
    var key: String?

    @Option(help: ArgumentHelp("A search's text (verses, people): fills {query} in the URL.", valueName: "text"))
    var query: String?

    @Flag(help: "Load the next page of the cached search and cache the merged list.")
    var more = false

    @Option(help: ArgumentHelp("The payload contract the body must match.", valueName: "contract"))
    var contract: Contract = .json

    @Option(name: .customLong("max-age"), parsing: .unconditional, help: ArgumentHelp("How long the cache serves: 90s, 15m, 12h, 7d or 1w (units s m h d w); at most 36500d. (default: the contract's)", valueName: "duration"), transform: MaxAgeArgument.parse)
    var maxAge: MaxAgeArgument?

    @Option(help: ArgumentHelp("remote-first, cache-first or cache-only. (default: the contract's)", valueName: "strategy"))
    var strategy: CacheStrategy?

    @Option(parsing: .unconditional, help: ArgumentHelp("Retries when the remote sends invalid data, 0 to 10, waiting 0.5 s, 1 s, 2 s … within --timeout (connection errors are not retried). (default: the contract's)", valueName: "n"))
    var retries: Int?

    // The network options (NetworkOptions: declared here, not as an option group).
    @Option(help: NetworkOptions.Help.timeout)
    var timeout = NetworkOptions.defaultTimeout

    @Option(help: NetworkOptions.Help.cacert, transform: CACertificatesArgument.init)
    var cacert: CACertificatesArgument?

    @Option(help: NetworkOptions.Help.proxy)
    var proxy: String?

    @Option(name: .customLong("noproxy"), help: NetworkOptions.Help.noProxy)
    var noProxy: String?

    @Option(name: .customLong("max-body"), help: NetworkOptions.Help.maxBody)
    var maxBody = CurlHTTPClient.defaultMaxBodySize

    @Option(name: .customLong("format"), help: DocumentFormat.help)
    var formatOption: DocumentFormat?

    /// The cache key: given, or the default of a search or an object.
    var resolvedKey: String? {
        if let key { return key }
        if let query { return CacheKey.search(contract: contract.name, query: query) }
        if contract == .person { return CacheKey.object(text: url) ?? "object:" + url }
        return nil
    }

    func validate() throws {
        try network.validate()
        try checkDocumentFormat()
        let sample = SearchTemplate.expand(url, query: query ?? "", page: 1)
        try URL.checkFetchable(sample, shown: url, example: "https://example.com/feed.json")
        if query != nil, !contract.isSearch { throw ValidationError("--query is for the search contracts, verses and people") }
        if more, query == nil { throw ValidationError("--more continues a search: give its --query") }
        if query == nil, url.contains("{query}") { throw ValidationError("the URL holds {query}: give --query") }
        if query != nil, !url.contains("{query}") {
            throw ValidationError("--query fills {query} in the URL, which has none; e.g. 'https://example.com/search?q={query}'")
        }
        guard let key = resolvedKey else { throw ValidationError("--key is required (or --query for a search)") }
        guard !key.isEmpty else { throw ValidationError("--key must not be empty") }
        guard (0...10).contains(retries ?? 0) else { throw ValidationError("--retries must be between 0 and 10") }
    }

    func run() async throws {
        Interruption.sayWhenInterrupted("cachelog: interrupted; nothing was printed, and a save is whole in the log or absent")
        try await Self.reportingFailures {
            guard let key = resolvedKey else { throw ValidationError("--key is required") }
            let client = try global.client(http: network.client())
            let report = try await contract.visit(LoadRequest(
                client: client, key: key, url: url, query: query, more: more, maxAge: maxAge?.value, strategy: strategy,
                retries: retries, budget: .seconds(network.timeout)))
            // The work is done: a signal from here on would say that nothing was printed while
            // the result is being written, or already is.
            Interruption.commandEnded()
            let out = StandardOutput()
            // --quiet: a load that worked prints nothing (the exit code says so).
            try out.show(report, as: format) { if !global.quiet { report.text.forEach(out.line) } }
            out.flush()
            await DueRetention.apply { try await client.applyRetentionIfDue() }
            if let warning = report.warning { Terminal.message("cachelog: \(warning)") }
            for object in report.skippedObjects {
                Terminal.message("cachelog: \(EventPrinter.escaped(object)) was not cached: its key is longer than the \(try client.log().maxKeySize) bytes the database allows")
            }
            if let error = report.saveError {
                throw CLIFailure("the items were loaded from the remote but not cached: \(error)")
            }
        }
    }
}
