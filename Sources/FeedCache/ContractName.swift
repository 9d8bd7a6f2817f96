/// The name of the contract a cached payload follows, as a save records it: an app's own, or
/// one of the contracts this package ships (the five apps' feeds and `json`).
///
/// The two never collide. An app names its contract with a string (`"films"` is as good as any),
/// and that name is recorded as the app's; only this package can record one of its own
/// contracts, which is what lets a validation that knows nothing of the app decode a payload
/// under a contract and delete it when it does not decode: it does so only for the package's own
/// contracts, and judges every app's contract by age alone.
public struct ContractName: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name as recorded, for example `films`.
    public let name: String
    /// Whether the contract is one this package ships and can decode.
    public let isBuiltIn: Bool

    /// An app's contract named `name`.
    public init(_ name: String) {
        self.name = name
        isBuiltIn = false
    }

    /// An app's contract named by a string literal.
    public init(stringLiteral name: String) {
        self.init(name)
    }

    /// One of this package's own contracts; no code outside the package can make one.
    package init(builtIn name: String) {
        self.name = name
        isBuiltIn = true
    }

    /// The name.
    public var description: String { name }
}
