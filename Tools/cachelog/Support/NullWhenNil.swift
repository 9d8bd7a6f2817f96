/// An optional report field that JSON shows as `null` when absent, where a plain optional
/// (`encodeIfPresent`) would leave the key out: the reports promise every key.
@propertyWrapper
struct NullWhenNil<Value: Encodable & Equatable>: Encodable, Equatable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}
