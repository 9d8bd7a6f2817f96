#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One verse search result: `{"scripture": String, "distance": Double, "text": String}`.
public struct Verse: Codable, Sendable, Equatable, Hashable {
    /// The reference, for example `John 3:16`.
    public let scripture: String
    /// How far the verse is from the query (smaller is closer).
    public let distance: Double
    /// The verse text.
    public let text: String

    /// Creates a verse.
    public init(scripture: String, distance: Double, text: String) {
        self.scripture = scripture
        self.distance = distance
        self.text = text
    }
}

/// The verse search contract: a top-level JSON array of ``Verse``.
public enum VersesMapper {
    /// Maps a 200 response whose body matches the contract to its verses.
    ///
    /// - Throws: ``RemoteLoaderError/invalidData`` for any other status or body.
    @Sendable
    public static func map(_ data: Data, from response: HTTPResponse) throws -> [Verse] {
        try JSONContract.decode([Verse].self, from: data, response: response)
    }
}
