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

    /// Whether an event of this kind is about a key: every kind but ``retention``, a control
    /// record of the log itself, which has no key, and which the state, the key index and the
    /// per-key counts pass over (the log's `meta` names the policy's record).
    public var isAboutAKey: Bool { self != .retention }

    /// The lowercase name used in output and on the command line.
    public var name: String { String(describing: self) }

    /// Parses `put`, `delete`, `expire` or `retention`.
    public init?(name: String) {
        guard let kind = EventKind.allCases.first(where: { $0.name == name }) else { return nil }
        self = kind
    }
}
