#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A cached payload that is not the JSON array `FeedPayloadCoder/exactJSON` writes.
public struct NotAJSONArrayError: Error, Sendable, CustomStringConvertible {
    /// Says what the payload is not.
    public var description: String { "the cached payload is not a JSON array" }
}

/// The coder of the `json` contract, which keeps a server's JSON exactly as it was sent.
extension FeedPayloadCoder where Item == JSONValue {
    /// Stores the values as one JSON array of their exact text, and reads it back unchanged
    /// (numbers of any size and precision, escapes and unicode byte for byte).
    public static var exactJSON: Self {
        Self(
            encode: { Data(JSONValue.array($0)) },
            decode: { payload in
                guard let scanned = JSONScanner.scan(Array(payload)), let elements = scanned.elements else {
                    throw NotAJSONArrayError()
                }
                return elements.map { JSONValue(text: Array(scanned.compact[$0])) }
            })
    }
}
