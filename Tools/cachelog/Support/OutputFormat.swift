import ArgumentParser

/// `--format`, one option for every command, given after the command name or before it (a root
/// option, as --db is): `text`, `json` (one document) or `jsonl` (one JSON object per line).
/// A command that prints one document takes text and json; replay, which prints a stream of
/// events, takes text and jsonl. The other value is a one-line usage error saying which to use.
enum OutputFormat: String, CaseArgument, Sendable {
    case text, json, jsonl

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
enum TextOrJSON: String, Sendable, FormatChoice {
    case text, json
}

enum TextOrJSONLines: String, Sendable, FormatChoice {
    case text, jsonl
}

/// A command that prints something other than a document or a stream (report's HTML page).
enum TextOnly: String, Sendable, FormatChoice {
    case text
}

/// The formats a command prints, as its `--format` lists them.
protocol FormatChoice: RawRepresentable<String>, CaseIterable, Sendable {}

/// `--format` as one command declares it: its help and completions list only what the command
/// prints. The other formats still parse, so that `validate()` can say which one to use where
/// ArgumentParser would only say the value is invalid.
struct FormatOption<Choice: FormatChoice>: ExpressibleByArgument, Sendable {
    let format: OutputFormat

    init?(argument: String) {
        guard let format = OutputFormat(rawValue: argument) else { return nil }
        self.format = format
    }

    static var allValueStrings: [String] { Choice.allCases.map(\.rawValue) }

    static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }

    /// ArgumentParser lists the formats after it: "(values: text, json)".
    static var help: ArgumentHelp { ArgumentHelp("Output format (default: text).", valueName: "format") }
}

/// `--format` of a command that prints one document.
typealias DocumentFormat = FormatOption<TextOrJSON>
/// `--format` of a command that prints a stream of lines.
typealias StreamFormat = FormatOption<TextOrJSONLines>

/// A command with a `--format` of its own, which falls back to the root's.
protocol FormattedCommand: ParsableCommand {
    associatedtype Formats: FormatChoice
    var parent: CacheLogCommand { get }
    var formatOption: FormatOption<Formats>? { get }
}

extension FormattedCommand {
    /// ArgumentParser's own name for the command: the type's name, lowercased, unless configured.
    static var commandName: String { configuration.commandName ?? String(describing: Self.self).lowercased() }

    /// The format asked for: this command's --format, else the one given before the command name.
    var chosenFormat: OutputFormat { formatOption?.format ?? parent.global.format ?? .text }

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
