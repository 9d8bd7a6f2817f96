import ArgumentParser
import CacheLogKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct Image: AsyncParsableCommand, DatabaseCommand, FormattedCommand, NetworkCommand {
    static let configuration = CommandConfiguration(
        commandName: "image",
        abstract: "Image data: from the cache when it holds it, else from the remote, then cached.",
        discussion: HelpLayout.keepingIndentation("""
            The film and image feed apps' image data use case. The bytes of URL are cached under the \
            key image:URL (one atomic delete + put, recording --max-age): while the cached copy is \
            younger than --max-age it is delivered with no request at all; otherwise the remote is \
            asked (HTTP 200 with at least one byte) and what it sends is cached. No cache and no \
            remote: one line on stderr and exit code 3.

            The bytes go to --out FILE, else to stdout when it is not a terminal. As with curl \
            -o, the kernel opens --out (its link protections and file ownership apply; a file \
            keeps its owner and mode); a regular file of your own is replaced whole, a new one \
            is created 0600, and a link, a FIFO, a device or a descriptor (/dev/stdout, \
            >(gzip > x)) is written through. Another user's link in a shared directory (/tmp) \
            is never followed. --format json prints {"source", "url", "key", "bytes", "cached", "timestamp", "age"} instead \
            of the bytes (and still writes --out).

            HTTPS, redirects, --cacert (its file alone is trusted), --proxy, --noproxy, the \
            proxy variables (https_proxy, http_proxy, all_proxy, no_proxy), CACHELOG_LIBCURL, \
            --max-body and --timeout work as for load (see cachelog load --help).

            SIGINT, SIGTERM, SIGHUP or SIGQUIT during the download delivers nothing and caches \
            nothing: exit code 128 + the signal (130, 143, 129, 131).

            Examples:
              cachelog image https://example.com/totoro.jpg --out totoro.jpg
              cachelog image https://example.com/totoro.jpg --format json | jq .source
              cachelog image https://example.com/totoro.jpg | file -
            """))

    @ParentCommand var parent: CacheLogCommand

    @Argument(help: ArgumentHelp("The image's URL (http or https).", valueName: "url"))
    var url: String

    @Option(help: ArgumentHelp("Write the bytes to this file; - for stdout.", valueName: "file"))
    var out: String?

    private var toStdout: Bool { out == nil || out == "-" }

    @Option(name: .customLong("max-age"), parsing: .unconditional, help: ArgumentHelp("How long the cached copy serves: 90s, 15m, 12h, 7d or 1w (units s m h d w); at most 36500d. (default: the max age it was saved under; 7d for a new save)", valueName: "duration"), transform: MaxAgeArgument.parse)
    var maxAge: MaxAgeArgument?

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

    func validate() throws {
        try network.validate()
        try checkDocumentFormat()
        try URL.checkFetchable(url, shown: url, example: "https://example.com/image.jpg")
        if toStdout, format == .text, Terminal.stdoutIsTerminal {
            throw ValidationError("refusing to write image bytes to a terminal; add --out FILE, a pipe, or --format json")
        }
        if let out, out != "-" { try OutFile.check(out, notIn: global.databasePath()) }
    }

    func run() async throws {
        try await Self.reportingFailures {
            guard let imageURL = URL(string: url) else { throw ValidationError("'\(url)' is not a URL") }
            let client = try global.client(http: network.client())
            var resource = client.image(at: imageURL)
            resource.maxAge = maxAge?.value
            let image = resource
            let loaded = try await Interruption.run { try await image.load() }
            // Delivered and cached: a signal from here on would say otherwise while the image is written.
            Interruption.commandEnded()
            let data = loaded.items.first ?? Data()
            if let out, out != "-" { try OutFile.write(data, to: out) }
            let report = ImageReport(
                source: loaded.source == .remote ? .remote : .cache, url: url, key: loaded.key, bytes: data.count,
                cached: loaded.isCached, timestamp: loaded.timestamp, age: loaded.age(at: client.clock()).rounded())
            let stdout = StandardOutput()
            try stdout.show(report, as: format) {
                if toStdout { stdout.append(data) }
            }
            stdout.flush()
            await DueRetention.apply { try await client.applyRetentionIfDue() }
            if let warning = ServedDespite.warning(key: loaded.key, source: loaded.source, remoteFailure: loaded.remoteFailure) {
                Terminal.message("cachelog: \(warning)")
            }
            switch loaded.cacheSave {
            case .failed(let error): throw CLIFailure("the image was loaded from the remote but not cached: \(error)")
            case .superseded(let newer): throw CLIFailure("the image was loaded from the remote but not cached: \(newer)")
            case .saved, .notAttempted: break
            }
        }
    }
}
