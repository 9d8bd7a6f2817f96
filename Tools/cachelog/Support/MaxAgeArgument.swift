import ArgumentParser
import FeedCache

/// A duration option's value (`--max-age`, `--keep`): the library's grammar (``MaxAge/parse(_:)``),
/// one for every duration the tool takes; relative times (`--as-of 7d`) use it too, through
/// ``PositionArgument``.
struct MaxAgeArgument: ExpressibleByArgument, CustomStringConvertible, Sendable {
    let value: MaxAge

    /// `--max-age` of the commands that judge staleness after the fact (`audit`, `report`).
    static let judgingHelp = ArgumentHelp("One max age that judges staleness for every version: 90s, 15m, 12h, 7d or 1w (units s m h d w); at most 36500d. (default: each version's recorded policy)", valueName: "duration")

    /// Parses `argument`; give it to `@Option(transform:)` so that the usage error says what is
    /// wrong and what to write.
    static func parse(_ argument: String) throws -> MaxAgeArgument {
        MaxAgeArgument(try MaxAge.parse(argument))
    }

    init?(argument: String) {
        guard let parsed = try? MaxAge.parse(argument) else { return nil }
        value = parsed
    }

    init(_ value: MaxAge) { self.value = value }

    var defaultValueDescription: String { value.description }
    var description: String { value.description }
}
