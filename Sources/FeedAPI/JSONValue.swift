#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One JSON value exactly as the server wrote it, without the whitespace between its tokens: the
/// item type of the `json` contract, which caches whatever JSON the URL serves.
///
/// Deliberately not `Codable`: `JSONEncoder` and `JSONDecoder` pass numbers through `Double` and
/// re-escape strings, so 9007199254740993 would come back as 9007199254740992. The cache stores
/// these bytes instead.
public struct JSONValue: Sendable, Equatable, Hashable {
    /// The value's JSON text, tokens byte for byte as received.
    public let text: [UInt8]

    /// A value whose JSON text is `text`, taken as it is (``items(in:)`` checks text it scans).
    public init(text: [UInt8]) {
        self.text = text
    }

    /// The items of a JSON text: an array's elements, or any other value as the one item.
    /// `nil` when `data` is not JSON.
    public static func items(in data: Data) -> [JSONValue]? {
        guard let scanned = JSONScanner.scan(Array(data)) else { return nil }
        guard let elements = scanned.elements else { return [JSONValue(text: scanned.compact)] }
        return elements.map { JSONValue(text: Array(scanned.compact[$0])) }
    }

    /// `values` as one JSON array.
    public static func array(_ values: [JSONValue]) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(values.reduce(2) { $0 + $1.text.count + 1 })
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: value.text)
        }
        bytes.append(UInt8(ascii: "]"))
        return bytes
    }
}
