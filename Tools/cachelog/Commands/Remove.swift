import ArgumentParser
import CacheLog

struct Remove: AsyncParsableCommand, DatabaseCommand, FormattedCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove cached keys: the next load asks the remote.",
        discussion: HelpLayout.keepingIndentation("""
            Each key that has a live cache gets a delete with the reason 'explicit', all in one \
            append (all land or none does); the history before it stays, for replay and audit. A \
            key with nothing cached is reported and records nothing; that is not an error (exit 0), \
            so a script can remove a key whether or not it is there. --all removes every live key. \
            A database that does not exist yet holds nothing to remove (nothing is created). JSON: \
            {"removed": [keys], "notCached": [keys]}.

            Examples:
              cachelog remove films
              cachelog remove search:people:sky object:https://swapi.dev/api/people/1/
              cachelog remove --all --format json | jq '.removed | length'
            """))

    @ParentCommand var parent: CacheLogCommand

    @Argument(help: ArgumentHelp("The keys to remove, as 'cachelog state' lists them.", valueName: "key"))
    var keys: [String] = []

    @Flag(help: "Remove every live key.")
    var all = false

    @Option(name: .customLong("format"), help: DocumentFormat.help)
    var formatOption: DocumentFormat?

    func validate() throws {
        try checkDocumentFormat()
        guard keys.isEmpty != !all else { throw ValidationError("give the keys to remove, or --all") }
        if keys.contains("") { throw ValidationError("an empty key names no cache: 'cachelog state' lists the live keys") }
        if let long = keys.first(where: { $0.utf8.count > EventLog.keySizeLimit }) {
            throw ValidationError("a key is at most \(EventLog.keySizeLimit) bytes; this one has \(long.utf8.count)")
        }
    }

    func run() async throws {
        try await Self.reportingFailures {
            let out = StandardOutput()
            let log: EventLog
            do {
                log = try global.openForWriting()
            } catch CacheLogError.noDatabase(let path) {
                let summary = RemovalSummary(removed: [], notCached: keys)
                try out.show(summary, as: format) {
                    if !global.quiet { out.line("nothing to remove: no database at \(path) yet") }
                }
                out.flush()
                return
            }
            let asked = all ? try log.state().entries.map(\.key) : keys
            let removed = try await log.deleteLive(asked)
            let summary = RemovalSummary(removed: removed, notCached: asked.filter { !removed.contains($0) })
            try out.show(summary, as: format) {
                for key in summary.removed { out.line("removed \(EventPrinter.escaped(key))") }
                for key in summary.notCached where !global.quiet { out.line("\(EventPrinter.escaped(key)): nothing cached") }
                if asked.isEmpty && !global.quiet { out.line("no live cache entries") }
            }
            out.flush()
            await DueRetention.apply { try await log.applyRetentionIfDue() }
        }
    }
}

/// `remove --format json`: the keys removed, and those that had nothing cached.
struct RemovalSummary: Encodable {
    let removed: [String]
    let notCached: [String]
}
