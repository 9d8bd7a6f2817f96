import Foundation

/// Help text whose indented lines (examples, lists) keep their indentation when they wrap.
///
/// swift-argument-parser wraps a discussion to the terminal's width and starts every wrapped
/// piece at column 0, so a long example would continue at the left margin, looking like prose.
/// It leaves alone a line shorter than the width, so we wrap indented lines first, continuing
/// each piece four columns deeper than the line began.
enum HelpLayout {
    /// `text` with each indented line wider than the help's width wrapped at spaces.
    static func keepingIndentation(_ text: String, width: Int = helpWidth) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { wrapped(String($0), width: width) }
            .joined(separator: "\n")
    }

    /// The width swift-argument-parser wraps help to: `COLUMNS`, else stdout's terminal, else 80.
    static let helpWidth: Int = {
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 { return columns }
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }()

    private static func wrapped(_ line: String, width: Int) -> String {
        let indent = line.prefix { $0 == " " }.count
        // The parser re-wraps a line that reaches the width, so ours stay one column short.
        let limit = width - 1
        guard indent > 0, line.count > limit else { return line }
        let continuation = String(repeating: " ", count: indent + 4)
        // Too narrow to indent usefully: let the parser wrap it as it would.
        guard limit - continuation.count >= 20 else { return line }
        var pieces: [String] = []
        var current = String(line.prefix(indent))
        var currentHasWord = false
        for word in line.dropFirst(indent).split(separator: " ") {
            if currentHasWord && current.count + 1 + word.count > limit {
                pieces.append(current)
                current = continuation + word
            } else {
                current += (currentHasWord ? " " : "") + word
            }
            currentHasWord = true
        }
        pieces.append(current)
        // A word longer than a line (a URL) cannot be wrapped; the parser would break its line
        // at a space of the indentation and start the word at column 0. No-break spaces keep
        // the indentation whole, and the terminal folds the long word.
        return pieces.map { piece in
            guard piece.count > limit else { return piece }
            let indentation = piece.prefix { $0 == " " }
            return String(repeating: "\u{00A0}", count: indentation.count) + piece.dropFirst(indentation.count)
        }.joined(separator: "\n")
    }
}
