import ArgumentParser

struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the version and the database format (as --version does).",
        discussion: """
            Examples:
              cachelog version
              cachelog version --format json | jq .databaseFormat
            """)

    @Option(help: "Output format.")
    var format: TextOrJSON = .text

    func run() throws {
        let out = StandardOutput()
        try out.show(VersionReport(), as: format) { out.line(VersionReport.text) }
        out.flush()
    }
}
