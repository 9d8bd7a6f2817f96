#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How ``LocalFeedLoader`` turns items into the payload a ``FeedStore`` keeps, and back.
///
/// The default for `Codable` items, ``json``, is `JSONEncoder` with sorted keys. Items that must
/// keep bytes `JSONEncoder` would rewrite (a generic JSON value whose numbers do not fit a
/// `Double`, or whose escapes must stay as the server wrote them) bring their own coder.
public struct FeedPayloadCoder<Item: Sendable>: Sendable {
    /// Encodes items as one payload; throws when they cannot be encoded.
    public let encode: @Sendable ([Item]) throws -> Data
    /// Decodes a payload written by ``encode``; throws when it is not one.
    public let decode: @Sendable (Data) throws -> [Item]

    /// Creates a coder from its two directions, which must round-trip: `decode(encode(items))`
    /// gives back `items`.
    public init(encode: @escaping @Sendable ([Item]) throws -> Data, decode: @escaping @Sendable (Data) throws -> [Item]) {
        self.encode = encode
        self.decode = decode
    }
}

extension FeedPayloadCoder where Item: Codable {
    /// JSON with sorted keys, so that equal feeds give equal payloads (and the log stores a
    /// repeated feed once).
    public static var json: Self {
        Self(
            encode: { items in
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                return try encoder.encode(items)
            },
            decode: { payload in try JSONDecoder().decode([Item].self, from: payload) })
    }
}

extension FeedPayloadCoder where Item == Data {
    /// One item, the payload's bytes as they are: image data, or a payload whose contract is
    /// unknown and must be kept (and checked) as it is. An empty list is stored as no bytes.
    public static var bytes: Self {
        Self(encode: { $0.first ?? Data() }, decode: { [$0] })
    }
}
