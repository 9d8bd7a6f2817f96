#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Help text whose indented lines (examples, lists) keep their indentation when they wrap.
///
/// swift-argument-parser wraps a discussion to the terminal's width and starts every wrapped
/// piece at column 0, so a long example would continue at the left margin, looking like prose.
/// It leaves alone a line shorter than the width, so we wrap indented lines first, continuing
/// each piece four columns deeper than the line began.
enum HelpLayout {
    /// `text` with each indented line wider than the help's width wrapped at spaces; `text` as it
    /// is in a run that shows no help (``showsHelp``).
    static func keepingIndentation(_ text: String, width: Int = helpWidth) -> String {
        guard showsHelp else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { wrapped(String($0), width: width) }
            .joined(separator: "\n")
    }

    /// Whether this run may show a command's discussion: asked for help (`-h`, `--help`, `help`,
    /// or the manual page's `--experimental-dump-help`), or given no argument at all (the root
    /// command then prints its help). Any other run only parses: the discussions ArgumentParser
    /// reads at every start are never shown, so they are not laid out (`callgrind` of
    /// `cachelog state`: 9 % of its instructions went into laying out the long examples).
    static let showsHelp: Bool = {
        let arguments = CommandLine.arguments.dropFirst()
        return arguments.isEmpty || arguments.contains { ["-h", "--help", "help", "--experimental-dump-help"].contains($0) }
    }()

    /// The width help is wrapped to: `COLUMNS`, else stdout's terminal, else 80; never under 40.
    static let helpWidth: Int = {
        let minimum = 40
        // getenv, not ProcessInfo's environment: this runs at every start, and the latter copies
        // the whole environment into a dictionary.
        if let columns = getenv("COLUMNS").flatMap({ Int(String(cString: $0)) }), columns > 0 { return max(columns, minimum) }
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return max(Int(size.ws_col), minimum) }
        return 80
    }()

    /// Tells swift-argument-parser the width through `COLUMNS`, which it reads first. It traps
    /// (SIGILL) when the width leaves no room beside its indentation (`COLUMNS=0`, `-5`, `26`,
    /// or a terminal that narrow); at 40 or more it cannot.
    static func settleWidth() {
        setenv("COLUMNS", String(helpWidth), 1)
    }

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
        // A word longer than a line (a URL) is cut into pieces that fit: left whole, the parser
        // would wrap it at a space of the indentation, or of the lines after it.
        let room = limit - continuation.count
        let words = line.dropFirst(indent).split(separator: " ").flatMap { word in
            stride(from: 0, to: word.count, by: room).map { String(word.dropFirst($0).prefix(room)) }
        }
        for word in words {
            if currentHasWord && current.count + 1 + word.count > limit {
                pieces.append(current)
                current = continuation + word
            } else {
                current += (currentHasWord ? " " : "") + word
            }
            currentHasWord = true
        }
        pieces.append(current)
        return pieces.joined(separator: "\n")
    }
}
