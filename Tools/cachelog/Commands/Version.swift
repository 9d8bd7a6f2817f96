import ArgumentParser

struct Version: ParsableCommand, DocumentCommand {
    @ParentCommand var parent: CacheLogCommand

    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print the version and the database format (as --version does).",
        discussion: HelpLayout.keepingIndentation("""
            Examples:
              cachelog version
              cachelog version --format json | jq .databaseFormat
            """))

    @Option(name: .customLong("format"), help: DocumentFormat.help)
    var formatOption: DocumentFormat?

    func run() throws {
        let out = StandardOutput()
        try out.show(VersionReport(), as: format) { out.line(VersionReport.text) }
        out.flush()
    }
}
