/// The kinds of stored event. The raw value is the byte written in the record header.
public enum EventKind: UInt8, Sendable, CaseIterable {
    /// A payload stored for a key: the key's new live value.
    case put = 1
    /// The key's value removed, with a reason.
    case delete = 2
    /// Validation found the value too old and removed it (only if it was still the live one).
    case expire = 3
    /// The database's retention policy was set (``RetentionPolicy``): about no key.
    case retention = 4

    /// The lowercase name used in output and on the command line.
    public var name: String { String(describing: self) }

    /// Parses `put`, `delete`, `expire` or `retention`.
    public init?(name: String) {
        guard let kind = EventKind.allCases.first(where: { $0.name == name }) else { return nil }
        self = kind
    }
}
