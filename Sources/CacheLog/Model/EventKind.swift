/// The three kinds of stored event. The raw value is the byte written in the record header.
public enum EventKind: UInt8, Sendable, CaseIterable {
    case put = 1
    case delete = 2
    case expire = 3

    /// The lowercase name used in output and on the command line.
    public var name: String { String(describing: self) }

    /// Parses `put`, `delete` or `expire`.
    public init?(name: String) {
        guard let kind = EventKind.allCases.first(where: { $0.name == name }) else { return nil }
        self = kind
    }
}
