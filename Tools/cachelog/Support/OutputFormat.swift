import ArgumentParser

/// `--format` values.
enum TextOrJSON: String, ExpressibleByArgument, CaseIterable, Sendable {
    case text, json
}

enum TextOrJSONLines: String, ExpressibleByArgument, CaseIterable, Sendable {
    case text, jsonl
}
