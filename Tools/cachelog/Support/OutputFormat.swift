import ArgumentParser

/// `--format`, one option for every command, given after the command name or before it (a root
/// option, as --db is): `text`, `json` (one document) or `jsonl` (one JSON object per line).
/// A command that prints one document takes text and json; replay, which prints a stream of
/// events, takes text and jsonl. The other value is a one-line usage error saying which to use.
enum OutputFormat: String, CaseArgument, Sendable {
    case text, json, jsonl

    static let help = ArgumentHelp("Output format: text, json or jsonl (default: text).", valueName: "format")

    /// As a document command prints it, or `nil` for jsonl.
    var document: TextOrJSON? {
        switch self {
        case .text: .text
        case .json: .json
        case .jsonl: nil
        }
    }

    /// As a stream command prints it, or `nil` for json.
    var stream: TextOrJSONLines? {
        switch self {
        case .text: .text
        case .jsonl: .jsonl
        case .json: nil
        }
    }
}

/// The formats as each kind of command prints them.
enum TextOrJSON: String, Sendable {
    case text, json
}

enum TextOrJSONLines: String, Sendable {
    case text, jsonl
}

/// A command with a `--format` of its own, which falls back to the root's.
protocol FormattedCommand: ParsableCommand {
    var parent: CacheLogCommand { get }
    var formatOption: OutputFormat? { get }
}

extension FormattedCommand {
    /// ArgumentParser's own name for the command: the type's name, lowercased, unless configured.
    static var commandName: String { configuration.commandName ?? String(describing: Self.self).lowercased() }

    /// The format asked for: this command's --format, else the one given before the command name.
    var chosenFormat: OutputFormat { formatOption ?? parent.global.format ?? .text }

    /// For a command that prints one document; checked by ``checkDocumentFormat()`` in `validate()`.
    var format: TextOrJSON { chosenFormat.document ?? .json }

    /// A usage error for `--format jsonl` on a command that prints one document.
    func checkDocumentFormat() throws {
        guard chosenFormat.document == nil else { return }
        throw ValidationError("\(Self.commandName) prints one document, not lines: use --format json")
    }
}

/// A command that prints one document (text or JSON): `--format jsonl` is a usage error, checked
/// while parsing so that it is reported with the command's usage.
protocol DocumentCommand: FormattedCommand {}

extension DocumentCommand {
    func validate() throws { try checkDocumentFormat() }
}
