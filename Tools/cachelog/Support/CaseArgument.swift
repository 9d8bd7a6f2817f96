import ArgumentParser

/// An option whose values are the raw strings of its cases (`--format json`, `--contract films`),
/// listed in help and completions without reflection.
///
/// ArgumentParser describes each case with `"\(value)"`, that is `String(describing:)`, a dynamic
/// cast per call; it lists every option's values while building a command's arguments, help or
/// not. `callgrind` of `cachelog state` counted 6 % of the process in listing `--format`'s three
/// values (twice: the root's and the command's).
protocol CaseArgument: ExpressibleByArgument, CaseIterable, RawRepresentable where RawValue == String {}

// Public only because FeedCache's (public) CacheStrategy conforms too.
extension CaseArgument {
    public var defaultValueDescription: String { rawValue }
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
    /// None: a value is its own description, which ArgumentParser reads as no description.
    public static var allValueDescriptions: [String: String] { [:] }
}
